import { setTimeout as sleep } from 'node:timers/promises';
import type { AccountPanicReport, PanicJob } from '../domain/panic-job.js';
import type { NewEvent } from '../store/repos/events.js';
import type { PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';
import type { AccountFlattener } from './panic-close.js';

export interface PanicJobOptions {
  /** Close rounds per account before the job gives up with positions left (each round re-reads the broker). */
  maxRounds: number;
  /** Wait after round n: backoffMs * 2^(n-1), at most maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /**
   * Least wait after a write whose answer was lost before the read that settles it: a broker may still be
   * applying it, and re-reading too early would re-send a close that was about to land.
   */
  settleMs: number;
  onError?: (err: unknown) => void;
}

export const DEFAULT_PANIC_OPTIONS: PanicJobOptions = { maxRounds: 6, backoffMs: 250, maxBackoffMs: 4000, settleMs: 1000 };

/**
 * Runs panic-close jobs to their end. Progress is saved after every per-position answer (writes queued so
 * they land in order), a progress event after every round that left something open, and the finished events
 * in the same transaction as the job's final state.
 */
export class PanicJobRunner {
  private readonly opts: PanicJobOptions;
  private readonly runs = new Map<string, Promise<void>>();
  /** Two jobs covering one account (its own and its group's) flatten it one after the other, never at once. */
  private readonly accountTurns = new Map<string, Promise<unknown>>();
  private stopping = false;

  constructor(private readonly store: Store, private readonly jobs: PanicJobsRepo, private readonly flattener: AccountFlattener, opts: Partial<PanicJobOptions> = {}) {
    this.opts = { ...DEFAULT_PANIC_OPTIONS, ...opts };
  }

  get maxRounds(): number {
    return this.opts.maxRounds;
  }

  run(job: PanicJob): Promise<void> {
    const existing = this.runs.get(job.id);
    if (existing) return existing;
    const p = this.execute(job).catch((err: unknown) => this.opts.onError?.(err)).finally(() => this.runs.delete(job.id));
    this.runs.set(job.id, p);
    return p;
  }

  done(jobId: string): Promise<void> | undefined {
    return this.runs.get(jobId);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.runs.values()]);
  }

  private async execute(job: PanicJob): Promise<void> {
    const progress = structuredClone(job.progress);
    let writes: Promise<void> = Promise.resolve();
    const save = (evs: NewEvent[] = []) => {
      const snapshot = structuredClone(progress);
      writes = writes.then(() => this.jobs.update(job.id, { progress: snapshot }, evs)).catch((err: unknown) => this.opts.onError?.(err));
      return writes;
    };
    const event = (r: AccountPanicReport, type: string): NewEvent => ({
      userId: job.userId, accountId: r.accountId, type,
      payload: { scope: job.scope, targetId: job.targetId, jobId: job.id, round: r.round, closed: r.closed, failed: r.failed, remaining: r.remaining, cancelled: r.cancelled },
    });

    await Promise.all(progress.accounts.map((r) => this.inTurn(r.accountId, () => this.flatten(job, r, save, event))));
    await writes;
    if (this.stopping && progress.accounts.some((r) => r.state === 'running')) return;
    const flat = progress.accounts.every((r) => r.state === 'flat');
    const left = progress.accounts.filter((r) => r.state !== 'flat');
    const error = flat ? null : `not flat after ${this.opts.maxRounds} rounds: ${left.map((r) => `${r.accountId} has ${r.remaining} position(s)${r.remainingOrders ? ` and ${r.remainingOrders} pending order(s)` : ''} open${r.error ? ` (${r.error})` : ''}`).join('; ')}`;
    await this.jobs.update(job.id, { state: flat ? 'succeeded' : 'failed', progress, error, finishedAt: new Date() }, progress.accounts.map((r) => event(r, 'panic_close.finished')));
  }

  private async flatten(job: PanicJob, r: AccountPanicReport, save: (evs?: NewEvent[]) => Promise<void>, event: (r: AccountPanicReport, type: string) => NewEvent): Promise<void> {
    if (r.state !== 'running') return;
    const account = await this.store.accounts.byId(r.accountId);
    if (!account) {
      Object.assign(r, { state: 'failed', error: 'the account no longer exists' });
      await save();
      return;
    }
    for (;;) {
      const snap = await this.flattener.read(account, r, job.cancelPending);
      if (snap && snap.positions.length === 0 && snap.orders.length === 0) {
        r.state = 'flat';
        await save();
        return;
      }
      if (r.round >= this.opts.maxRounds) {
        r.state = 'failed';
        await save();
        return;
      }
      if (this.stopping) {
        await save();
        return;
      }
      r.round += 1;
      if (snap) await this.flattener.act(account, r, snap, () => void save());
      await save([event(r, 'panic_close.progress')]);
      const lost = r.positions.some((p) => p.outcome === 'unresolved') || r.orders.some((o) => o.outcome === 'unresolved');
      // Every write answered yes: the confirming read can follow at once.
      const allDone = r.positions.every((p) => p.outcome === 'closed') && r.orders.every((o) => o.outcome !== 'failed' && o.outcome !== 'unresolved');
      if (snap && allDone) continue;
      const backoff = Math.min(this.opts.backoffMs * 2 ** (r.round - 1), this.opts.maxBackoffMs);
      await sleep(lost ? Math.max(backoff, this.opts.settleMs) : backoff);
    }
  }

  private inTurn<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.accountTurns.get(accountId) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(fn);
    const tail = next.catch(() => undefined);
    this.accountTurns.set(accountId, tail);
    void tail.then(() => { if (this.accountTurns.get(accountId) === tail) this.accountTurns.delete(accountId); });
    return next;
  }
}
