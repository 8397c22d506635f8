import { setTimeout as sleep } from 'node:timers/promises';
import type { Account } from '../domain/account.js';
import type { AccountPanicReport, PanicJob, PanicProgress } from '../domain/panic-job.js';
import type { NewEvent } from '../store/repos/events.js';
import type { PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';
import { ProgressWriter, type Flattener } from './panic-progress.js';

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
  /** Progress is saved at most this often while the job runs (and always at its end). */
  saveEveryMs: number;
  onError?: (err: unknown) => void;
  /**
   * A worker: whether its broker writes may still leave under the lease the jobs run under (the deployment lease,
   * LeaseKeeper.mayWrite). Once it says no, this process sends nothing more and leaves its jobs running for the
   * lease's next holder, which resumes them from a fresh read. Default: always.
   */
  mayWrite?: () => boolean;
}

export const DEFAULT_PANIC_OPTIONS: PanicJobOptions = {
  maxRounds: 6,
  backoffMs: 250,
  maxBackoffMs: 4000,
  settleMs: 1000,
  saveEveryMs: 250,
};

interface LiveRun {
  done: Promise<void>;
  progress: PanicProgress;
}

/**
 * Runs panic-close jobs to their end. Progress is saved as it changes (at most every saveEveryMs), a progress
 * event after every round that left something open, and the finished events in the same transaction as the
 * job's final state. "Flat" is only ever concluded from a fresh read of every account taken after the last of
 * them was flattened: an account flattened early could have taken a position while another was still closing.
 */
export class PanicJobRunner {
  private readonly opts: PanicJobOptions;
  private readonly runs = new Map<string, LiveRun>();
  /** Two jobs covering one account (its own and its group's) flatten it one after the other, never at once. */
  private readonly accountTurns = new Map<string, Promise<unknown>>();
  private stopping = false;
  /** Stopping, or this process may no longer write under the jobs' lease. */
  private readonly halted = () => this.stopping || !(this.opts.mayWrite?.() ?? true);

  constructor(
    private readonly store: Store,
    private readonly jobs: PanicJobsRepo,
    private readonly flattener: Flattener,
    opts: Partial<PanicJobOptions> = {},
  ) {
    this.opts = { ...DEFAULT_PANIC_OPTIONS, ...opts };
  }

  get maxRounds(): number {
    return this.opts.maxRounds;
  }

  /** Jobs running in this process now. */
  get live(): number {
    return this.runs.size;
  }

  run(job: PanicJob): Promise<void> {
    const existing = this.runs.get(job.id);
    if (existing) return existing.done;
    const progress = structuredClone(job.progress);
    const done = this.execute(job, progress)
      .catch((err: unknown) => this.opts.onError?.(err))
      .finally(() => this.runs.delete(job.id));
    this.runs.set(job.id, { done, progress });
    return done;
  }

  done(jobId: string): Promise<void> | undefined {
    return this.runs.get(jobId)?.done;
  }

  /** The job with the progress this process holds for it while it runs here (else as given). */
  current(job: PanicJob): PanicJob {
    const live = this.runs.get(job.id);
    return live ? { ...job, progress: structuredClone(live.progress), updatedAt: new Date() } : job;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.runs.values()].map((r) => r.done));
  }

  /** Runs jobs again after a stop (a worker that lost the jobs' lease and took it back). */
  reopen(): void {
    this.stopping = false;
  }

  private async execute(job: PanicJob, progress: PanicProgress): Promise<void> {
    const writer = new ProgressWriter(this.store, this.jobs, job.id, progress, this.opts.saveEveryMs, (err) =>
      this.opts.onError?.(err),
    );
    const event = (r: AccountPanicReport, type: string): NewEvent => ({
      userId: job.userId,
      accountId: r.accountId,
      type,
      payload: {
        scope: job.scope,
        targetId: job.targetId,
        jobId: job.id,
        round: r.round,
        closed: r.closed,
        failed: r.failed,
        remaining: r.remaining,
        cancelled: r.cancelled,
      },
    });
    const accounts = new Map<string, Account | null>();
    const accountOf = async (id: string) => {
      if (!accounts.has(id)) accounts.set(id, await this.store.accounts.byId(id));
      return accounts.get(id)!;
    };
    const stopped = this.halted;
    // The job ends here only on a conclusion: flat from a fresh read of every account, or an account given up.
    let concluded = false;
    for (let pass = 1; ; ) {
      await Promise.all(
        progress.accounts.map((r) =>
          this.inTurn(r.accountId, async () => this.flatten(job, r, await accountOf(r.accountId), writer, event)),
        ),
      );
      if (this.halted()) break;
      // An account still running was stopped by the write gate, which has opened again since (a lease renewal
      // that landed late on a busy machine): not an end. Concluding here gave up accounts mid-way, their closes
      // sent, reporting the positions of the read before them as left open. Its next round starts from a read.
      if (progress.accounts.some((r) => r.state === 'running')) continue;
      if (progress.accounts.some((r) => r.state !== 'flat')) {
        concluded = true;
        break;
      }
      // Every account read flat once; read them all again, now that the last one is done, before saying so.
      const again = await Promise.all(
        progress.accounts.map(async (r) => {
          const account = await accountOf(r.accountId);
          const snap = account ? await this.flattener.read(account, r, job.cancelPending, writer, stopped) : null;
          const flat = snap !== null && snap.positions.length === 0 && snap.orders.length === 0;
          if (!flat) r.state = r.round >= this.opts.maxRounds || pass >= this.opts.maxRounds ? 'failed' : 'running';
          return flat;
        }),
      );
      if (again.every(Boolean) || progress.accounts.some((r) => r.state === 'failed')) {
        concluded = true;
        break;
      }
      if (this.halted()) break;
      pass++;
    }
    if (!concluded) {
      // Stopped or fenced: the job stays running, resumed by the next start or the lease's next holder.
      await writer.flush();
      return;
    }
    const flat = progress.accounts.every((r) => r.state === 'flat');
    const left = progress.accounts.filter((r) => r.state !== 'flat');
    const error = flat
      ? null
      : `not flat after ${this.opts.maxRounds} rounds: ${left.map((r) => `${r.accountId} has ${r.remaining} position(s)${r.remainingOrders ? ` and ${r.remainingOrders} pending order(s)` : ''} open${reasonOf(r)}`).join('; ')}`;
    await writer.flush(
      { state: flat ? 'succeeded' : 'failed', error, finishedAt: new Date() },
      progress.accounts.map((r) => event(r, 'panic_close.finished')),
    );
  }

  private async flatten(
    job: PanicJob,
    r: AccountPanicReport,
    account: Account | null,
    writer: ProgressWriter,
    event: (r: AccountPanicReport, type: string) => NewEvent,
  ): Promise<void> {
    if (r.state !== 'running') return;
    if (!account) {
      Object.assign(r, { state: 'failed', error: 'the account no longer exists' });
      writer.changed();
      return;
    }
    const stopped = this.halted;
    for (;;) {
      const snap = await this.flattener.read(account, r, job.cancelPending, writer, stopped);
      if (snap && snap.positions.length === 0 && snap.orders.length === 0) {
        r.state = 'flat';
        writer.changed();
        return;
      }
      if (r.round >= this.opts.maxRounds) {
        r.state = 'failed';
        writer.changed();
        return;
      }
      if (this.halted()) return;
      r.round += 1;
      const sentBefore = attemptsOf(r);
      if (snap) await this.flattener.act(account, r, snap, writer, stopped);
      // Every write of the round stopped by the gate before it left: no try at the broker, so no round spent.
      if (snap && attemptsOf(r) === sentBefore) r.round -= 1;
      await writer.flush({}, [event(r, 'panic_close.progress')]);
      if (this.halted()) return;
      const lost =
        r.positions.some((p) => p.outcome === 'unresolved') || r.orders.some((o) => o.outcome === 'unresolved');
      // Every write answered yes: the confirming read can follow at once.
      const allDone =
        r.positions.every((p) => p.outcome === 'closed') &&
        r.orders.every((o) => o.outcome !== 'failed' && o.outcome !== 'unresolved');
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
    void tail.then(() => {
      if (this.accountTurns.get(accountId) === tail) this.accountTurns.delete(accountId);
    });
    return next;
  }
}

/** Writes sent for an account so far (a write the gate stopped before it left is taken back: see NotSent). */
const attemptsOf = (r: AccountPanicReport) =>
  r.positions.reduce((n, p) => n + p.attempts, 0) + r.orders.reduce((n, o) => n + o.attempts, 0);

/**
 * Why an account was given up: its failed read, else a broker's refusal of one of its last writes. Without the
 * latter the job's error read as if the broker had answered nothing wrong (the reason sat in a position's result).
 */
const reasonOf = (r: AccountPanicReport): string => {
  if (r.error) return ` (${r.error})`;
  const refused =
    r.positions.find((p) => p.outcome === 'failed' && p.error) ??
    r.orders.find((o) => o.outcome === 'failed' && o.error);
  if (!refused) return '';
  return ` (${'positionId' in refused ? 'close' : 'cancel'} refused: ${refused.error})`;
};
