import type { Store } from '../store/store.js';
import { AccountWatch } from './account-watch.js';
import type { WatcherOptions } from './watch-options.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';

/**
 * Turns every Master's own activity into copy actions: subscribes to each Master's broker events (or polls
 * and diffs when the platform cannot stream), and on start diffs the broker's state against what the store
 * knows, so whatever happened while the service was down is copied once (or skipped as stale). One queue
 * per Master keeps its actions in order; Masters run in parallel.
 */
export class Watcher {
  private readonly watches = new Map<string, AccountWatch>();
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
    private readonly opts: WatcherOptions = {},
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.scan();
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    every(
      this.opts.scanMs ?? 10_000,
      () => void this.scan().catch((err: unknown) => this.log('watcher scan failed', err)),
    );
    every(this.opts.resyncMs ?? 30_000, () => {
      for (const w of this.watches.values()) w.enqueue({ kind: 'diff', reason: 'resync' });
    });
  }

  /** Starts watching Masters that appeared since (a new group, a role change). */
  async scan(): Promise<void> {
    if (this.stopped) return;
    const owns = this.opts.owns ?? (() => true);
    const masters = (await this.store.accounts.masters()).filter((a) => owns(a.id));
    // A Master removed (or its lease lost, or made a Slave) since: its watch stops, so nothing reads a connection that is gone.
    const current = new Set(masters.map((m) => m.id));
    for (const [id, w] of this.watches) {
      if (current.has(id)) continue;
      this.watches.delete(id);
      await w.stop();
    }
    await Promise.all(
      masters
        .filter((m) => !this.watches.has(m.id))
        .map(async (m) => {
          const adapter = await this.adapters.forAccount(m).catch(() => null);
          // Asked again after the wait: a scan running beside this one (a lease lost or handed over meanwhile) may
          // have stopped this Master's watch because it is no longer ours; it must not start again here.
          if (!adapter || this.stopped || this.watches.has(m.id) || !owns(m.id)) return;
          const w = new AccountWatch(m.id, adapter, this.store, this.engine, this.opts, (msg, err) =>
            this.log(msg, err),
          );
          this.watches.set(m.id, w);
          w.start();
        }),
    );
  }

  /** Asks for a diff of one Master now (the reconciler calls this on reconnect). */
  resync(accountId: string): void {
    this.watches.get(accountId)?.enqueue({ kind: 'diff', reason: 'requested' });
  }

  /** Resolves when every queue is empty and every copy written (tests and shutdown). */
  async idle(): Promise<void> {
    for (let i = 0; i < 100; i++) {
      await Promise.all([...this.watches.values()].map((w) => w.idle()));
      await Promise.all([...this.watches.keys()].map((id) => this.engine.idle(id)));
      await this.engine.flush();
      if ([...this.watches.values()].every((w) => w.isIdle())) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.all([...this.watches.values()].map((w) => w.stop()));
    this.watches.clear();
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}
