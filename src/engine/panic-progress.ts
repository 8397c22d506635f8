import type { Account } from '../domain/account.js';
import type { AccountPanicReport, PanicProgress, PositionResult } from '../domain/panic-job.js';
import type { NewEvent } from '../store/repos/events.js';
import type { JobPatch, PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';

/**
 * What a panic job needs of the one who closes an account's positions: read the account (a snapshot of what
 * to close), then act on that snapshot. Declared here so the job runner and the flattener need not import each
 * other.
 */
export interface Flattener<Snapshot extends FlattenSnapshot = FlattenSnapshot> {
  read(
    account: Account,
    report: AccountPanicReport,
    cancelPending: boolean,
    sink: FlattenSink,
    stop?: () => boolean,
  ): Promise<Snapshot | null>;
  act(
    account: Account,
    report: AccountPanicReport,
    snap: Snapshot,
    sink: FlattenSink,
    stop?: () => boolean,
  ): Promise<void>;
}

/** The snapshot as the job sees it: it counts what is to close. */
export type FlattenSnapshot = { positions: readonly unknown[]; orders: readonly unknown[] };

/** What the flattener tells the job while it works. */
export interface FlattenSink {
  /** Something in the progress changed; it is saved soon, not at once. */
  changed(): void;
  /** A position is closed (by our close's answer or a later read): its event and link go with the next save. */
  closed(account: Account, r: PositionResult, price: string | null): void;
}

/**
 * Saves a job's progress at most once per `intervalMs`, however many answers arrive. Saving after every
 * answer rewrote the whole progress (every position) once per position: at 1,200 positions that was
 * thousands of large writes, and the event loop and the store were busy with them instead of the route.
 * The position.closed events travel in the same transaction as the progress that says "closed", so a stop
 * between the two can neither lose nor repeat one; the closed link is then settled per account in one pass.
 */
export class ProgressWriter implements FlattenSink {
  private dirty = false;
  private events: NewEvent[] = [];
  private readonly links = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly jobs: PanicJobsRepo,
    private readonly jobId: string,
    private readonly progress: PanicProgress,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  changed(): void {
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.enqueue({}, []);
    }, this.intervalMs);
  }

  closed(account: Account, r: PositionResult, price: string | null): void {
    this.events.push({
      userId: account.userId,
      accountId: account.id,
      type: 'position.closed',
      payload: {
        role: account.role,
        positionId: r.positionId,
        symbol: r.symbol,
        side: r.side,
        volume: r.volume,
        price,
        reason: 'panic_close',
      },
    });
    let ids = this.links.get(account.id);
    if (!ids) this.links.set(account.id, (ids = new Set()));
    ids.add(r.positionId);
    this.changed();
  }

  /** Saves now (with the patch and events given), after any save already under way; resolves once stored. */
  flush(patch: Omit<JobPatch, 'progress'> = {}, evs: NewEvent[] = []): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.dirty = true;
    return this.enqueue(patch, evs);
  }

  private enqueue(patch: Omit<JobPatch, 'progress'>, evs: NewEvent[]): Promise<void> {
    this.chain = this.chain.then(() => this.write(patch, evs)).catch((err: unknown) => this.onError(err));
    return this.chain;
  }

  private async write(patch: Omit<JobPatch, 'progress'>, extra: NewEvent[]): Promise<void> {
    if (!this.dirty && this.events.length === 0 && extra.length === 0) return;
    this.dirty = false;
    const progress = structuredClone(this.progress);
    const events = [...this.events.splice(0), ...extra];
    const links = [...this.links].map(([accountId, ids]) => [accountId, [...ids]] as const);
    this.links.clear();
    try {
      await this.jobs.update(this.jobId, { ...patch, progress }, events);
    } catch (err) {
      // Kept for the next save: a closed position's event must not be lost to one failed write.
      this.events.unshift(...events.slice(0, events.length - extra.length));
      for (const [accountId, ids] of links)
        for (const id of ids) this.links.set(accountId, (this.links.get(accountId) ?? new Set()).add(id));
      this.dirty = true;
      throw err;
    }
    for (const [accountId, ids] of links) {
      const closed = new Set(ids);
      for (const link of await this.store.trades.openLinksOfSlave(accountId)) {
        if (link.slavePositionId && closed.has(link.slavePositionId))
          await this.store.trades.closeLink(link.id, 'panic_close');
      }
    }
  }
}
