import type { Logger } from 'pino';
import type { Account } from '../domain/account.js';
import { newId } from '../domain/ids.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { CopyIntent } from '../domain/ledger-types.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';
import type { MasterAction } from './actions.js';
import { RetryHolds } from './rate-limit.js';
import { opOf } from './intent-ops.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { PreTradeCheck } from './planner.js';
import type { TradeLike } from './ledger.js';
import { AccountWork } from './account-work.js';
import { CopySender, type SendRequest } from './copy-sender.js';
import { recordPlan } from './copy-record.js';
import type { CopyEngineOptions } from './copy-engine-options.js';
import { groupSlaves, withAdapters } from './group-slaves.js';
import { GroupMovedError } from '../domain/group-moved.js';
import type { HeldGroupSlaves } from '../store/repos/group-slaves-read.js';
import { MasterBreaker, pauseTripped } from './circuit-breaker.js';
import { SpecCache } from './spec-cache.js';
import { WorkClaims } from './work-claims.js';
import { followKeys, itemKeys } from './item-keys.js';
import { PlanInputs, type Planned, type Slave } from './plan-inputs.js';
import type { CopyOptions, CopyResult } from './copy-options.js';
import type { CopyObserver } from './copy-observer.js';

export type { CopyEngineOptions } from './copy-engine-options.js';

/**
 * The copy pipeline shared by the order route, the watcher and the reconciler: plan one row per Slave for a
 * master action, record them (and the trade) in one transaction, then dispatch the sends in parallel and
 * write each outcome. Every write ends confirmed, rejected, denied or unresolved; unresolved is settled by
 * looking at the broker (settle()), never by a blind resend.
 */
export class CopyEngine {
  readonly clock: () => number;
  preTradeCheck: PreTradeCheck | undefined;
  private readonly writer: OutcomeWriter;
  /** The Slave brokers' instrument specs, cached per live adapter. */
  readonly specs = new SpecCache();
  /** Per Slave, copies waiting to be sent again after a refusal their broker said to retry (admission reads it). */
  readonly retrying = new RetryHolds();
  /** What this process holds of the ledger's unfinished work, and the settle loop's rule for the rest. */
  readonly claims = new WorkClaims();
  /** Per Master account, copies still being dispatched (what a reconcile pass or a hand-over waits for). */
  private readonly pending = new AccountWork();
  /** The same copies per Master item: a follow-up of the item plans from the links their outcomes write. */
  private readonly itemWork = new AccountWork();
  private readonly sender: CopySender;
  private readonly breaker: MasterBreaker | null;
  private readonly inputs: PlanInputs;
  private readonly logger: Logger | null;
  private readonly heldSlavesMaxAgeMs: number;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    readonly dispatcher: Dispatcher,
    opts: CopyEngineOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.preTradeCheck = opts.preTradeCheck;
    this.heldSlavesMaxAgeMs = opts.heldSlavesMaxAgeMs ?? 1000;
    this.logger = opts.logger || null;
    this.writer = new OutcomeWriter(store, opts.logger ?? false);
    const { mayWrite, sleep } = opts;
    this.sender = new CopySender(store, dispatcher, this.writer, this.retrying, this.clock, mayWrite, sleep);
    this.breaker = opts.breaker ? new MasterBreaker(opts.breaker, this.clock) : null;
    this.inputs = new PlanInputs(store, this.specs, this.clock, () => this.preTradeCheck);
  }

  /**
   * Counts the action against the Master's ceiling; over it, the Master is paused (status, reason, events)
   * and this action is planned as from a paused Master: nothing that adds exposure is copied.
   */
  private async guard(master: Account, opts: CopyOptions): Promise<Account> {
    // Not the Master's activity now: the reconciler's repairs, and what a watch start found missed while down.
    // Nor orders sent through our API: the user's own commands (a burst of them is not a loop; a loop shows as
    // Master activity at the broker, which the watcher brings here), limited by family V's own limits.
    if (opts.source === 'reconciler' || opts.source === 'api' || opts.catchUp) return master;
    const trip = this.breaker?.hit(master);
    if (!trip) return master;
    // An operator reading the log must see why a Master stopped being copied, not only the account's status.
    this.logger?.warn(
      { accountId: master.id, actions: trip.actions, ceiling: trip.ceiling, windowMs: trip.windowMs },
      'circuit breaker tripped: copying from this Master is paused until it is resumed',
    );
    return pauseTripped(this.store, master, trip);
  }

  /** Waits until every copy of this Master account dispatched so far has its outcome (links exist for what follows). */
  idle(masterAccountId: string): Promise<void> {
    return this.pending.settled(masterAccountId);
  }

  /**
   * Waits until every copy dispatched so far for the Master items this action touches has its outcome: its plan
   * reads the links they write. Copies of the Master's other items go on meanwhile, so one slow Slave broker holds
   * only the follow-ups of what it is still copying, never the Master's next trade.
   */
  itemIdle(masterAccountId: string, action: MasterAction): Promise<void> {
    const keys = followKeys(masterAccountId, action);
    if (keys.length === 0) return this.idle(masterAccountId);
    return Promise.all(keys.map((k) => this.itemWork.settled(k))).then(() => undefined);
  }

  slavesOf(master: Account): Promise<Slave[]> {
    return groupSlaves(this.store, this.adapters, master);
  }

  async copy(from: Account, action: MasterAction, opts: CopyOptions = {}): Promise<CopyResult> {
    const t0 = performance.now();
    this.sender.touch(from.id);
    const master = await this.guard(from, opts);
    const tradeId = opts.tradeId ?? newId('trd');
    // A fan-out recorded by its action (not the order route's, whose intents are recorded by their trade id) plans
    // on the group as held when a read confirmed it recently: one statement and its round trip less before the
    // first send on PostgreSQL. Its record is guarded; when the group moved, nothing was written and the copy reads
    // the group and plans again. A risk guard then counts the first plan's rows too, until its next sample (~2 s):
    // it can only shrink or skip a copy more than it would, never let one through that it should not.
    const recent =
      opts.tradeId || !master.groupId || this.heldSlavesMaxAgeMs <= 0
        ? null
        : this.store.accounts.recentSlavesOfGroup(master.userId, master.groupId, this.heldSlavesMaxAgeMs);
    if (recent) {
      try {
        return await this.copyPlanned(master, action, opts, tradeId, t0, recent);
      } catch (err) {
        if (!(err instanceof GroupMovedError)) throw err;
      }
    }
    return this.copyPlanned(master, action, opts, tradeId, t0, null);
  }

  private async copyPlanned(
    master: Account,
    action: MasterAction,
    opts: CopyOptions,
    tradeId: string,
    t0: number,
    recent: HeldGroupSlaves | null,
  ): Promise<CopyResult> {
    let slaves = recent ? await withAdapters(this.adapters, recent.slaves) : await this.slavesOf(master);
    if (opts.onlySlaves) slaves = slaves.filter((s) => opts.onlySlaves!.has(s.account.id));
    const planned = await this.inputs.plan(master, action, tradeId, slaves, opts);
    const planMs = performance.now() - t0;

    const sends = planned.filter((p) => p.send);
    // Ours from the moment they are durable: the settle loop must not take them for orphans of a crash.
    this.claims.holdIntents(sends.map((p) => p.row.id));
    const t1 = performance.now();
    // Each row names the Slave's rule revision it was planned under (the store keeps it in the rule's JSON).
    for (const p of planned) if (p.slave.rule.revision !== undefined) p.row.ruleRevision = p.slave.rule.revision;
    const masterOutcome = opts.masterOutcome;
    const refPrice = masterOutcome?.fillPrice ?? (action.type === 'market' ? action.price : null);
    const forget = () => {
      for (const p of sends) this.claims.releaseIntent(p.row.id);
    };
    const notRecorded = { tradeId, recorded: false, dispatched: 0, done: Promise.resolve() };
    let rec: Awaited<ReturnType<typeof recordPlan>>;
    try {
      const plan = { master, action, opts, tradeId, planned, sends: sends.length, refPrice, recent };
      rec = await recordPlan(this.store, plan, this.claims);
    } catch (err) {
      forget();
      throw err;
    }
    if (!rec) {
      forget();
      return notRecorded;
    }
    const deferred = rec.deferred;
    const recordMs = performance.now() - t1;
    // Only what will not be sent: a row to send is counted by its outcome, and a fan-out's thousand of them would
    // be a thousand objects made on the path to the first send for an onlooker that skips each one.
    if (this.observer && sends.length < planned.length)
      this.observer.recorded(
        planned
          .filter((p) => !p.send)
          .map((p) => ({
            platform: p.slave.account.platform,
            state: p.row.state,
            skipReason: p.row.skipReason ?? null,
          })),
      );
    const trade: TradeLike = {
      orderType: action.type,
      masterPositionId: masterOutcome?.positionId ?? action.positionId,
      masterOrderId: masterOutcome?.brokerOrderId ?? action.orderId,
      fillPrice: refPrice,
      side: action.side,
      actionAt: new Date(action.at),
    };
    // One object for the fan-out: each dispatch copies it into its send's own.
    const hops = { plan: planMs, record: recordMs };
    const dispatched = sends.map((p) => this.dispatch(master, tradeId, trade, p, hops, t1 + recordMs));
    // Every send is handed out: the trade becomes accepted, with its events, in the first outcome batch.
    const accepted = deferred
      ? this.writer
          .push({ trade: { id: tradeId, set: { status: 'accepted' } }, events: deferred })
          .finally(() => this.claims.acceptWritten(tradeId))
      : Promise.resolve();
    const done = Promise.all([accepted, ...dispatched]).then(() => undefined);
    this.track(master.id, action, done);
    return { tradeId, recorded: true, dispatched: sends.length, done };
  }

  private track(masterId: string, action: MasterAction, p: Promise<void>): void {
    const ended = this.dispatcher.track(p).catch(() => undefined);
    this.pending.add(masterId, ended);
    for (const k of itemKeys(masterId, action)) this.itemWork.add(k, ended);
  }

  // ---- dispatch and outcomes ----------------------------------------------------------------------

  private async dispatch(
    master: Account,
    tradeId: string,
    trade: TradeLike,
    p: Planned,
    latency: Record<string, number>,
    recordedAt: number,
  ): Promise<void> {
    // Held since copy() claimed it before the record; let go once its outcome is written.
    const id = p.row.id;
    try {
      const fresh = this.clock() - trade.actionAt.getTime() <= p.slave.rule.maxDelayMs;
      const origTag =
        p.row.action === 'order_filled' && p.link?.intentId
          ? ((await this.store.trades.intentById(p.link.intentId))?.tag ?? null)
          : null;
      const op = opOf(p.row as CopyIntent, trade, p.slave.rule, {
        origTag,
        fresh,
        linkVolume: p.link?.volume ?? null,
      });
      const row = p.row as CopyIntent;
      await this.sender.sendOp({
        master,
        tradeId,
        trade,
        row,
        slave: p.slave,
        op,
        attempt: 1,
        latency: { ...latency },
        queuedAt: recordedAt,
      });
    } finally {
      this.claims.releaseIntent(id);
    }
  }

  /** Sends one op, settles a timeout by one look at the broker, and writes the outcome (copy-sender.ts). */
  sendOp(s: SendRequest): Promise<OrderOutcome> {
    return this.sender.sendOp(s);
  }

  /** Resolves once no broker write of this Master's copies is between its write gate and its outcome. */
  writesEnded(masterAccountId: string): Promise<void> {
    return this.sender.writesEnded(masterAccountId);
  }

  /** When this Master's last action was planned or a copy of it written (engine clock), 0 if none. */
  lastCopyAt(masterAccountId: string): number {
    return this.sender.lastCopyAt(masterAccountId);
  }

  /** Called when a write's outcome stays unknown after its one lookup (main wires the settle loop's nudge). */
  get onUnresolved(): (() => void) | undefined {
    return this.sender.onUnresolved;
  }
  set onUnresolved(f: (() => void) | undefined) {
    this.sender.onUnresolved = f;
  }

  /** Told what was recorded and what each broker answered (main wires the metrics). */
  get observer(): CopyObserver | undefined {
    return this.sender.observer;
  }
  set observer(o: CopyObserver | undefined) {
    this.sender.observer = o;
  }

  async flush(): Promise<void> {
    await this.writer.idle();
  }
}
