import type { Account } from '../domain/account.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { emptyReport, tally, type AccountPanicReport, type PanicJob, type PanicScope, type PositionResult, type OrderResult } from '../domain/panic-job.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import { PanicJobsRepo } from '../store/repos/panic-jobs.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';
import { PanicJobRunner, type PanicJobOptions } from './panic-jobs.js';

export type { AccountPanicReport } from '../domain/panic-job.js';

export interface BrokerSnapshot {
  adapter: BrokerAdapter;
  positions: Position[];
  orders: Order[];
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * One account's side of a panic-close, in two steps per round: `read` asks the broker what is still open and
 * settles every earlier write from that answer; `act` sends one close per open position and one cancel per
 * pending order. A close whose answer never came is therefore only ever re-sent after a later read still
 * lists the position: never twice blindly.
 */
export class AccountFlattener {
  constructor(private readonly store: Store, private readonly adapters: AdapterRegistry, private readonly dispatcher: Dispatcher) {}

  async read(account: Account, report: AccountPanicReport, cancelPending: boolean): Promise<BrokerSnapshot | null> {
    let snap: BrokerSnapshot;
    try {
      const adapter = await this.adapters.forAccount(account);
      const positions = await adapter.listPositions();
      const orders = cancelPending ? (await adapter.listOrders()).filter((o) => o.status === 'pending') : [];
      snap = { adapter, positions, orders };
    } catch (err) {
      report.error = `broker read failed: ${message(err)}`;
      return null;
    }
    report.error = null;
    const open = new Set(snap.positions.map((p) => p.id));
    for (const r of report.positions) {
      if (r.outcome === 'closed' || open.has(r.positionId)) continue;
      // Our close was sent but its answer was lost (or the service stopped mid-write): the read settles it.
      const ours = r.outcome === 'unresolved' || r.outcome === 'closing';
      Object.assign(r, { outcome: 'closed', error: null, settledBy: 'read' } satisfies Partial<PositionResult>);
      if (ours) await this.recordClosed(account, r, null);
    }
    const pending = new Set(snap.orders.map((o) => o.id));
    for (const r of report.orders) {
      if (r.outcome === 'cancelled' || r.outcome === 'gone' || pending.has(r.orderId)) continue;
      Object.assign(r, { outcome: r.outcome === 'failed' ? 'gone' : 'cancelled', error: null, settledBy: 'read' } satisfies Partial<OrderResult>);
    }
    report.remaining = snap.positions.length;
    report.remainingOrders = snap.orders.length;
    tally(report);
    return snap;
  }

  async act(account: Account, report: AccountPanicReport, snap: BrokerSnapshot, onChange: () => void): Promise<void> {
    const closes = snap.positions.map(async (pos) => {
      let r = report.positions.find((x) => x.positionId === pos.id);
      if (!r) {
        r = { positionId: pos.id, symbol: pos.symbol, side: pos.side, volume: pos.volume.toString(), outcome: 'closing', closePrice: null, error: null, attempts: 0, settledBy: null };
        report.positions.push(r);
      }
      Object.assign(r, { outcome: 'closing', volume: pos.volume.toString(), error: null, settledBy: null, attempts: r.attempts + 1 } satisfies Partial<PositionResult>);
      onChange();
      const o = await this.dispatcher.close(account.id, snap.adapter, pos.id).catch((err: unknown): OrderOutcome => ({ kind: 'unresolved', code: 'adapter_error', message: message(err) }));
      if (o.kind === 'confirmed' && (!o.filledVolume || o.filledVolume.gte(pos.volume))) {
        Object.assign(r, { outcome: 'closed', closePrice: o.fillPrice?.toString() ?? null, settledBy: 'answer' } satisfies Partial<PositionResult>);
        await this.recordClosed(account, r, o.fillPrice?.toString() ?? null);
      } else if (o.kind === 'confirmed') {
        // The rest stays open; the next round reads it and closes what is left.
        Object.assign(r, { outcome: 'failed', error: `partially closed: ${o.filledVolume} of ${pos.volume}` } satisfies Partial<PositionResult>);
      } else {
        Object.assign(r, { outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed', error: `${o.code}: ${o.message}` } satisfies Partial<PositionResult>);
      }
      tally(report);
      onChange();
    });
    const cancels = snap.orders.map(async (ord) => {
      let r = report.orders.find((x) => x.orderId === ord.id);
      if (!r) {
        r = { orderId: ord.id, symbol: ord.symbol, side: ord.side, type: ord.type, volume: ord.volume.toString(), outcome: 'cancelling', error: null, attempts: 0, settledBy: null };
        report.orders.push(r);
      }
      Object.assign(r, { outcome: 'cancelling', error: null, settledBy: null, attempts: r.attempts + 1 } satisfies Partial<OrderResult>);
      onChange();
      const o = await snap.adapter.cancelOrder(ord.id).catch((err: unknown): OrderOutcome => ({ kind: 'unresolved', code: 'adapter_error', message: message(err) }));
      if (o.kind === 'confirmed') Object.assign(r, { outcome: 'cancelled', settledBy: 'answer' } satisfies Partial<OrderResult>);
      else Object.assign(r, { outcome: o.kind === 'unresolved' ? 'unresolved' : 'failed', error: `${o.code}: ${o.message}` } satisfies Partial<OrderResult>);
      tally(report);
      onChange();
    });
    await Promise.all([...closes, ...cancels]);
  }

  private async recordClosed(account: Account, r: PositionResult, price: string | null): Promise<void> {
    await this.store.events.emit([{ userId: account.userId, accountId: account.id, type: 'position.closed', payload: { role: account.role, positionId: r.positionId, symbol: r.symbol, side: r.side, volume: r.volume, price, reason: 'panic_close' } }]);
    for (const link of await this.store.trades.openLinksOfSlave(account.id)) if (link.slavePositionId === r.positionId) await this.store.trades.closeLink(link.id, 'panic_close');
  }
}

export interface StartOptions {
  /** Cancel pending orders too (default true). */
  cancelPending?: boolean;
  /** Why: "manual" from the routes, or the risk rule that fired. Shown in the lock's statusReason. */
  reason?: string;
}

/**
 * Emergency close of an account, or of every account of a copier group, as a tracked job: the accounts are
 * locked first (no copy lands while they are being flattened), then flattened in parallel, round after round,
 * until flat or out of rounds. The job and its per-position results are readable while it runs, and a job
 * found running at start is resumed.
 */
export class PanicCloseService {
  readonly jobs: PanicJobsRepo;
  /** How long the panic-close routes wait for a job to end before answering 202 with the running job. */
  readonly syncWaitMs: number;
  private readonly runner: PanicJobRunner;

  constructor(private readonly store: Store, adapters: AdapterRegistry, dispatcher: Dispatcher, opts: Partial<PanicJobOptions> & { syncWaitMs?: number } = {}) {
    this.syncWaitMs = opts.syncWaitMs ?? 3000;
    this.jobs = new PanicJobsRepo(store.database.db, store.events);
    this.runner = new PanicJobRunner(store, this.jobs, new AccountFlattener(store, adapters, dispatcher), opts);
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
    if (running) return running;

    const reason = o.reason ?? 'manual';
    const id = newId('job');
    const base = { scope, targetId, jobId: id };
    const job = await this.jobs.create({
      id, userId, scope, targetId, cancelPending: o.cancelPending ?? true,
      progress: { maxRounds: this.runner.maxRounds, reason, accounts: members.map((m) => emptyReport(m.id)) },
    }, members.map((m) => ({ userId, accountId: m.id, type: 'panic_close.started', payload: { ...base, reason } })));
    await this.lock(members, `panic-close ${id} (${reason}); resume to copy again`);
    this.runner.run(job);
    return job;
  }

  private async lock(members: Account[], statusReason: string): Promise<void> {
    const events: NewEvent[] = [];
    for (const m of members) {
      await this.store.accounts.setStatus(m.id, 'locked', statusReason);
      events.push({ userId: m.userId, accountId: m.id, type: 'account.status_changed', payload: { before: m.status, after: 'locked', reason: statusReason } });
    }
    if (events.length > 0) await this.store.events.emit(events);
  }

  job(userId: string, id: string): Promise<PanicJob | null> {
    return this.jobs.owned(userId, id);
  }

  /** The job once it finished, or as it stands after `ms`, whichever comes first. */
  async wait(job: PanicJob, ms: number): Promise<PanicJob> {
    const run = this.runner.done(job.id);
    if (run && ms > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([run, new Promise((r) => { timer = setTimeout(r, ms); })]);
      clearTimeout(timer);
    }
    return (await this.jobs.owned(job.userId, job.id)) ?? job;
  }

  /** Picks up jobs a stopped service left running; returns how many. */
  async resumeRunning(): Promise<number> {
    const jobs = await this.jobs.running();
    for (const j of jobs) this.runner.run(j);
    return jobs.length;
  }

  /** Stops between rounds; running jobs stay `running` in the store and resume at the next start. */
  stop(): Promise<void> {
    return this.runner.stop();
  }
}
