/** The signals that stop a long-running command (serve, api, worker, simulator). */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface ShutdownDeps {
  log?: (level: 'info' | 'warn', fields: object, msg: string) => void;
  exit?: (code: number) => void;
  on?: (signal: (typeof SIGNALS)[number], fn: () => void) => void;
  /** Milliseconds now (injected by the tests). */
  now?: () => number;
  /**
   * A signal within this many ms of the first is the same request delivered twice, not an operator's second
   * Ctrl-C: `kill %1` signals the whole process group, so the service gets it once from the shell and once more
   * from `npm start`, which forwards what it receives. Default 2000.
   */
  repeatWindowMs?: number;
}

/**
 * Installed before a start, so a signal sent the moment a script sees "listening" never meets Node's default
 * action (die at once, with what was opened left open). A signal during the start is acted on once `ready` hands
 * over the close, so everything opened is closed in order. A second signal while starting or stopping exits at
 * once with 1: an operator's second Ctrl-C (or a supervisor's) must not wait on a shutdown that hangs. Before that
 * exit, `forced` hooks run (synchronous: a child the service started is signalled, not left running).
 */
export function shutdownOnSignals(deps: ShutdownDeps = {}): {
  ready(close: () => Promise<void>): void;
  /** Runs (synchronously) before a forced exit: stop what was started, since the close will not run. */
  onForcedExit(fn: () => void): void;
  /**
   * Aborted by the first signal that comes before `ready`: a start that only waits (for its database) ends on it
   * instead of making the stop wait for a server that may not come.
   */
  startAborted: AbortSignal;
} {
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  const on = deps.on ?? ((sig, fn) => process.on(sig, fn));
  const log = deps.log ?? (() => undefined);
  const now = deps.now ?? (() => performance.now());
  const repeatWindowMs = deps.repeatWindowMs ?? 2000;
  const forced: Array<() => void> = [];
  let firstAt = 0;
  let requested: string | null = null;
  let close: (() => Promise<void>) | null = null;
  let stopping = false;
  const starting = new AbortController();
  const stop = (signal: string) => {
    stopping = true;
    log('info', { signal }, 'shutting down');
    void close!().then(
      () => exit(0),
      (err: unknown) => {
        log('warn', { err, signal }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const sig of SIGNALS)
    on(sig, () => {
      if (stopping || (requested && !close)) {
        if (now() - firstAt < repeatWindowMs) {
          log('info', { signal: sig }, 'signal repeated at once (process group and npm): one shutdown');
          return;
        }
        log('warn', { signal: sig }, 'second signal: exiting without finishing the shutdown');
        for (const fn of forced) {
          try {
            fn();
          } catch {
            // Exiting anyway: a hook that fails must not keep the process alive.
          }
        }
        exit(1);
        return;
      }
      firstAt = now();
      if (close) stop(sig);
      else {
        requested = sig;
        starting.abort();
      }
    });
  return {
    startAborted: starting.signal,
    onForcedExit(fn) {
      forced.push(fn);
    },
    ready(fn) {
      close = fn;
      if (requested) stop(requested);
    },
  };
}
