/** One readiness check: resolves when its part is usable, throws (or never answers in time) when not. */
export type ReadinessCheck = () => Promise<unknown>;

export interface CheckReport {
  ok: boolean;
  /** Why not, as a fixed word: the body is public, so no host, URL or driver message goes into it. */
  error?: 'timeout' | 'unavailable';
  ms: number;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckReport>;
}

/**
 * What /readyz asks: each registered part (store, bus, leases...) answers within the timeout, or the process
 * is not ready (503). A check is registered by whoever owns the part, so a process checks only what it has
 * (an api process has no leases). The reason a check failed goes to `onFailure` (the log), once per change
 * from ok to failing, not once per probe.
 */
export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly failing = new Set<string>();

  constructor(private readonly opts: { timeoutMs?: number; onFailure?: (name: string, err: unknown) => void } = {}) {}

  /** Adds (or replaces) a named check; the returned function removes it. */
  register(name: string, check: ReadinessCheck): () => void {
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
    };
  }

  async report(): Promise<ReadinessReport> {
    const timeoutMs = this.opts.timeoutMs ?? 2000;
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]): Promise<[string, CheckReport]> => {
        const t0 = performance.now();
        let timer: NodeJS.Timeout | undefined;
        const timedOut = Symbol('timeout');
        try {
          const r = await Promise.race([
            check(),
            new Promise<typeof timedOut>((res) => {
              timer = setTimeout(() => res(timedOut), timeoutMs);
            }),
          ]);
          if (r === timedOut) throw new CheckTimeout(name, timeoutMs);
          this.failing.delete(name);
          return [name, { ok: true, ms: elapsed(t0) }];
        } catch (err) {
          if (!this.failing.has(name)) this.opts.onFailure?.(name, err);
          this.failing.add(name);
          const error = err instanceof CheckTimeout ? 'timeout' : 'unavailable';
          return [name, { ok: false, error, ms: elapsed(t0) }];
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return { ready: entries.every(([, c]) => c.ok), checks: Object.fromEntries(entries) };
  }
}

class CheckTimeout extends Error {
  constructor(name: string, ms: number) {
    super(`readiness check ${name} did not answer within ${ms} ms`);
  }
}

const elapsed = (t0: number) => Math.round((performance.now() - t0) * 10) / 10;
