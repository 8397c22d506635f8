import { setTimeout as sleep } from 'node:timers/promises';
import type { Account } from '../domain/account.js';
import { AppError, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import {
  emptyReport,
  tally,
  type AccountPanicReport,
  type PanicJob,
  type PanicScope,
  type PositionResult,
  type OrderResult,
} from '../domain/panic-job.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import type { PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { FlattenSink, Flattener } from './panic-progress.js';
import type { Dispatcher } from './dispatcher.js';
import { PanicJobRunner, type PanicJobOptions } from './panic-jobs.js';

export type { AccountPanicReport } from '../domain/panic-job.js';

export interface BrokerSnapshot {
  adapter: BrokerAdapter;
  positions: Position[];
  orders: Order[];
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

import { rateLimitWaitMs } from './rate-limit.js';

export { rateLimitWaitMs };

export interface FlattenerOptions {
  /** Closes in flight per account at once; the connection's pacer decides how fast they leave. */
  concurrency: number;
  /** Sends of one close (or read) refused for the rate limit before it counts as failed for the round. */
  rateLimitRetries: number;
  /** Wait after a rate-limit refusal that carried no retry hint. */
  rateLimitWaitMs: number;
  /** Longest wait honoured from a broker's hint (a bound, so a job always ends). */
  maxRateLimitWaitMs: number;
}

export const DEFAULT_FLATTENER_OPTIONS: FlattenerOptions = {
  concurrency: 32,
  rateLimitRetries: 8,
  rateLimitWaitMs: 1000,
  maxRateLimitWaitMs: 30_000,
};

/**
 * One account's side of a panic-close, in two steps per round: `read` asks the broker what is still open and
 * settles every earlier write from that answer; `act` sends one close per open position and one cancel per
 * pending order. A close whose answer never came is therefore only ever re-sent after a later read still
 * lists the position: never twice blindly. A refusal for the rate limit is different: nothing was applied,
 * so it is sent again after the broker's retry hint, within the same round.
 */
export class AccountFlattener implements Flattener<BrokerSnapshot> {
  private readonly opts: FlattenerOptions;

  constructor(
    private readonly adapters: AdapterRegistry,
    private readonly dispatcher: Dispatcher,
    opts: Partial<FlattenerOptions> = {},
  ) {
    this.opts = { ...DEFAULT_FLATTENER_OPTIONS, ...opts };
  }

  async read(
    account: Account,
    report: AccountPanicReport,
    cancelPending: boolean,
    sink: FlattenSink,
    stop: () => boolean = () => false,
  ): Promise<BrokerSnapshot | null> {
    let snap: BrokerSnapshot | null = null;
    for (let attempt = 0; !snap; attempt++) {
      try {
        const adapter = await this.adapters.forAccount(account);
        const positions = await adapter.listPositions();
        const orders = cancelPending ? (await adapter.listOrders()).filter((o) => o.status === 'pending') : [];
        snap = { adapter, positions, orders };
      } catch (err) {
        report.error = `broker read failed: ${message(err)}`;
        if (
          !(err instanceof AppError && err.code === 'rate_limited') ||
          attempt >= this.opts.rateLimitRetries ||
          stop()
        )
          return null;
        await sleep(this.hintMs(err.retryAfter !== undefined ? err.retryAfter * 1000 : this.opts.rateLimitWaitMs));
      }
    }
    report.error = null;
    const open = new Set(snap.positions.map((p) => p.id));
    for (const r of report.positions) {
      if (r.outcome === 'closed' || open.has(r.positionId)) continue;
      // Our close was sent but its answer was lost (or the service stopped mid-write): the read settles it.
      const ours = r.outcome === 'unresolved' || r.outcome === 'closing';
      Object.assign(r, { outcome: 'closed', error: null, settledBy: 'read' } satisfies Partial<PositionResult>);
      if (ours) sink.closed(account, r, null);
    }
    const pending = new Set(snap.orders.map((o) => o.id));
    for (const r of report.orders) {
      if (r.outcome === 'cancelled' || r.outcome === 'gone' || pending.has(r.orderId)) continue;
      Object.assign(r, {
        outcome: r.outcome === 'failed' ? 'gone' : 'cancelled',
        error: null,
        settledBy: 'read',
      } satisfies Partial<OrderResult>);
    }
    report.remaining = snap.positions.length;
    report.remainingOrders = snap.orders.length;
    tally(report);
    sink.changed();
    return snap;
  }

  /**
   * Cancels first (a pending order filling now would open what we are closing), then closes, a bounded
   * number at a time: the pacer queues them, and a stop leaves the ones not yet sent unsent.
   */
  async act(
    account: Account,
    report: AccountPanicReport,
    snap: BrokerSnapshot,
    sink: FlattenSink,
    stop: () => boolean = () => false,
  ): Promise<void> {
    const positions = new Map(report.positions.map((r) => [r.positionId, r]));
    const orders = new Map(report.orders.map((r) => [r.orderId, r]));
    const work: Array<() => Promise<void>> = [
      ...snap.orders.map((ord) => () => {
        let r = orders.get(ord.id);
        if (!r) {
          r = {
            orderId: ord.id,
            symbol: ord.symbol,
            side: ord.side,
            type: ord.type,
            volume: ord.volume.toString(),
            outcome: 'cancelling',
            error: null,
            attempts: 0,
            settledBy: null,
          };
          report.orders.push(r);
        }
        return this.cancelOne(account, snap, report, r, sink, stop);
      }),
      ...snap.positions.map((pos) => () => {
        let r = positions.get(pos.id);
        if (!r) {
          r = {
            positionId: pos.id,
            symbol: pos.symbol,
            side: pos.side,
            volume: pos.volume.toString(),
            outcome: 'closing',
            closePrice: null,
            error: null,
            attempts: 0,
            settledBy: null,
          };
          report.positions.push(r);
        }
        return this.closeOne(account, snap, report, r, pos, sink, stop);
      }),
    ];
    let next = 0;
    const worker = async () => {
      while (next < work.length && !stop()) await work[next++]!();
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, work.length) }, worker));
  }

  private async closeOne(
    account: Account,
    snap: BrokerSnapshot,
    report: AccountPanicReport,
    r: PositionResult,
    pos: Position,
    sink: FlattenSink,
    stop: () => boolean,
  ): Promise<void> {
    Object.assign(r, {
      outcome: 'closing',
      volume: pos.volume.toString(),
      error: null,
      settledBy: null,
    } satisfies Partial<PositionResult>);
    let o: OrderOutcome;
    for (let refused = 0; ; refused++) {
      r.attempts += 1;
      sink.changed();
      o = await this.dispatcher
        .close(account.id, snap.adapter, pos.id)
        .catch((err: unknown): OrderOutcome => ({ kind: 'unresolved', code: 'adapter_error', message: message(err) }));
      const wait = rateLimitWaitMs(o, this.opts.rateLimitWaitMs);
      if (wait === null || refused >= this.opts.rateLimitRetries || stop()) break;
      r.error = `rate_limited: waiting ${wait} ms before sending again`;
      await sleep(this.hintMs(wait));
    }
    if (o.kind === 'confirmed' && (!o.filledVolume || o.filledVolume.gte(pos.volume))) {
      Object.assign(r, {
        outcome: 'closed',
        error: null,
        closePrice: o.fillPrice?.toString() ?? null,
        settledBy: 'answer',
      } satisfies Partial<PositionResult>);
      sink.closed(account, r, o.fillPrice?.toString() ?? null);
    } else if (o.kind === 'confirmed') {
      // The rest stays open; the next round reads it and closes what is left.
      Object.assign(r, {
        outcome: 'failed',
        error: `partially closed: ${o.filledVolume} of ${pos.volume}`,
      } satisfies Partial<PositionResult>);
    } else {
      Object.assign(r, {
        outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed',
        error: `${o.code}: ${o.message}`,
      } satisfies Partial<PositionResult>);
    }
    tally(report);
    sink.changed();
  }

  private async cancelOne(
    account: Account,
    snap: BrokerSnapshot,
    report: AccountPanicReport,
    r: OrderResult,
    sink: FlattenSink,
    stop: () => boolean,
  ): Promise<void> {
    Object.assign(r, { outcome: 'cancelling', error: null, settledBy: null } satisfies Partial<OrderResult>);
    let o: OrderOutcome;
    for (let refused = 0; ; refused++) {
      r.attempts += 1;
      sink.changed();
      o = await this.dispatcher
        .run(account.id, snap.adapter, () => snap.adapter.cancelOrder(r.orderId))
        .catch((err: unknown): OrderOutcome => ({ kind: 'unresolved', code: 'adapter_error', message: message(err) }));
      const wait = rateLimitWaitMs(o, this.opts.rateLimitWaitMs);
      if (wait === null || refused >= this.opts.rateLimitRetries || stop()) break;
      r.error = `rate_limited: waiting ${wait} ms before sending again`;
      await sleep(this.hintMs(wait));
    }
    if (o.kind === 'confirmed')
      Object.assign(r, { outcome: 'cancelled', error: null, settledBy: 'answer' } satisfies Partial<OrderResult>);
    else
      Object.assign(r, {
        outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed',
        error: `${o.code}: ${o.message}`,
      } satisfies Partial<OrderResult>);
    tally(report);
    sink.changed();
  }

  private hintMs(ms: number): number {
    return Math.min(Math.max(0, ms), this.opts.maxRateLimitWaitMs);
  }
}

export interface StartOptions {
  /** Cancel pending orders too (default true). */
  cancelPending?: boolean;
  /** Why: "manual" from the routes, or the risk rule that fired. Shown in the lock's statusReason. */
  reason?: string;
}

export type PanicCloseOptions = Partial<PanicJobOptions> & Partial<FlattenerOptions> & { syncWaitMs?: number };

/**
 * Emergency close of an account, or of every account of a copier group, as a tracked job: the accounts are
 * locked first (no copy lands while they are being flattened), then flattened in parallel, round after round,
 * until flat or out of rounds. The job and its per-position results are readable while it runs, and a job
 * found running at start is resumed.
 */
export class PanicCloseService {
  readonly jobs: PanicJobsRepo;
  /**
   * How long the panic-close routes wait for a job to end before answering 202 with the running job. 2 s, so
   * that with the start itself and a busy event loop the answer still comes within the 3 s we promise.
   */
  readonly syncWaitMs: number;
  private readonly runner: PanicJobRunner;

  constructor(
    private readonly store: Store,
    adapters: AdapterRegistry,
    dispatcher: Dispatcher,
    opts: PanicCloseOptions = {},
  ) {
    this.syncWaitMs = opts.syncWaitMs ?? 2000;
    this.jobs = store.panicJobs;
    this.runner = new PanicJobRunner(store, this.jobs, new AccountFlattener(adapters, dispatcher, opts), opts);
  }

  async start(userId: string, scope: PanicScope, targetId: string, o: StartOptions = {}): Promise<PanicJob> {
    let members: Account[];
    if (scope === 'account') {
      const account = await this.store.accounts.owned(userId, targetId);
      if (!account) throw notFound('account');
      members = [account];
    } else {
      if (!(await this.store.accounts.ownedGroup(userId, targetId))) throw notFound('copier group');
      members = await this.store.accounts.list(userId, { groupId: targetId });
    }
    // A second press of the button joins the job already running instead of racing it.
    const running = await this.jobs.runningFor(userId, scope, targetId);
    if (running) return this.runner.current(running);

    const reason = o.reason ?? 'manual';
    const id = newId('job');
    const base = { scope, targetId, jobId: id };
    const job = await this.jobs.create(
      {
        id,
        userId,
        scope,
        targetId,
        cancelPending: o.cancelPending ?? true,
        progress: { maxRounds: this.runner.maxRounds, reason, accounts: members.map((m) => emptyReport(m.id)) },
      },
      members.map((m) => ({ userId, accountId: m.id, type: 'panic_close.started', payload: { ...base, reason } })),
    );
    await this.lock(members, `panic-close ${id} (${reason}); resume to copy again`);
    void this.runner.run(job);
    return job;
  }

  /**
   * Refuses what would undo a running job: resuming one of its accounts (copies would land again) or an
   * order to it (it would be copied). 409 panic_close_running with the job id; fine again once it ended.
   */
  async assertNoRunningJob(userId: string, accountId: string, what: string): Promise<void> {
    const job = (await this.jobs.runningOf(userId)).find((j) =>
      j.progress.accounts.some((a) => a.accountId === accountId),
    );
    if (!job) return;
    throw new AppError(
      'panic_close_running',
      `panic-close job ${job.id} is running on account ${accountId}; ${what} is refused until it ends`,
      { details: { jobId: job.id } },
    );
  }

  private async lock(members: Account[], statusReason: string): Promise<void> {
    const events: NewEvent[] = [];
    for (const m of members) {
      await this.store.accounts.setStatus(m.id, 'locked', statusReason);
      events.push({
        userId: m.userId,
        accountId: m.id,
        type: 'account.status_changed',
        payload: { before: m.status, after: 'locked', reason: statusReason },
      });
    }
    if (events.length > 0) await this.store.events.emit(events);
  }

  /** A job running in this process is read from its live progress (the store has it up to saveEveryMs later). */
  async job(userId: string, id: string): Promise<PanicJob | null> {
    const job = await this.jobs.owned(userId, id);
    return job && job.state === 'running' ? this.runner.current(job) : job;
  }

  /**
   * The job once it finished, or as it stands after `ms`, whichever comes first. A job still running here is
   * answered from this process's own view, not read back from a store that may be busy with its writes.
   */
  async wait(job: PanicJob, ms: number): Promise<PanicJob> {
    const run = this.runner.done(job.id);
    if (run && ms > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        run,
        new Promise((r) => {
          timer = setTimeout(r, ms);
        }),
      ]);
      clearTimeout(timer);
    }
    if (this.runner.done(job.id)) return this.runner.current(job);
    return (await this.jobs.owned(job.userId, job.id)) ?? job;
  }

  /** Picks up jobs a stopped service left running; returns how many. */
  async resumeRunning(): Promise<number> {
    const jobs = await this.jobs.running();
    for (const j of jobs) void this.runner.run(j);
    return jobs.length;
  }

  /** Stops sending (closes not yet sent stay unsent); running jobs stay `running` and resume at the next start. */
  stop(): Promise<void> {
    return this.runner.stop();
  }
}
