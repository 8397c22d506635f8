import type { Logger } from 'pino';
import type { Account } from '../domain/account.js';
import { goesStale, intentAction } from '../domain/intent-action.js';
import { newId } from '../domain/ids.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { CopyIntent } from '../domain/ledger-types.js';
import type { NewEvent } from '../store/repos/events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';
import { accountLeaseKey, StaleLeaseError } from '../domain/lease.js';
import type { MasterAction } from './actions.js';
import { copyRetryWindow, RetryHolds, retryTopic, sendPaced } from './rate-limit.js';
import { fencedCall } from './write-fence.js';
import { executeOp, opOf, verifyOp, type IntentOp } from './intent-ops.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { PreTradeCheck } from './planner.js';
import { actionTrade, fanoutTradeSet, type TradeLike } from './ledger.js';
import { outcomeWrite } from './outcome-ledger.js';
import { actionEvents } from './action-events.js';
import { groupSlaves, orderRouteEvents, withAdapters } from './group-slaves.js';
import { GroupMovedError } from '../domain/group-moved.js';
import type { HeldGroupSlaves } from '../store/repos/group-slaves-read.js';
import { MasterBreaker, pauseTripped, type BreakerOptions } from './circuit-breaker.js';
import { SpecCache } from './spec-cache.js';
import { PlanInputs, type Planned, type Slave } from './plan-inputs.js';
import type { CopyOptions, CopyResult } from './copy-options.js';
import type { CopyObserver } from './copy-observer.js';

export interface CopyEngineOptions {
  clock?: () => number;
  preTradeCheck?: PreTradeCheck;
  /** Per-Master ceiling on actions in a window (circuit-breaker.ts); off when absent. */
  breaker?: BreakerOptions;
  /** Where a ledger write the store refuses is reported. */
  logger?: Logger | false;
  /**
   * A worker: whether it still holds the Master's lease, asked right before each broker write of its copies. A
   * process paused past its lease must not send what its successor may already have settled and resent.
   */
  mayWrite?: (masterAccountId: string) => boolean;
  /**
   * On PostgreSQL, a watcher's copy plans on its group's Slaves as a read confirmed them at most this long ago
   * (ms), without reading them again; its record goes in only if nothing but a health round wrote them since. What
   * may be this old is their health and funds only. 0: every copy reads them first. Default 1000.
   */
  heldSlavesMaxAgeMs?: number;
  /** How a copy waits before sending again a write its broker refused for now (tests move their clock). */
  sleep?: (ms: number) => Promise<void>;
}

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
  /** Intents being sent by this process: the settle loop leaves them alone. */
  readonly inFlight = new Set<string>();
  /** Order-route trades whose route is still running in this process: the settle loop leaves them alone. */
  readonly ordering = new Set<string>();
  /** Trades recorded by this process whose move to accepted is still to be written. */
  readonly accepting = new Set<string>();
  /** Called when a write's outcome stays unknown after its one lookup (main wires the settle loop's nudge). */
  onUnresolved: (() => void) | undefined;
  /** Told what was recorded and what each broker answered (main wires the metrics). */
  observer: CopyObserver | undefined;
  /** Per Master account, copies still being dispatched: follow-ups of the same account wait for them. */
  private readonly pending = new Map<string, Set<Promise<void>>>();
  /** Per Master account, broker writes between their write gate and their outcome (dispatches and settle resends). */
  private readonly sending = new Map<string, Set<Promise<void>>>();
  private readonly lastCopy = new Map<string, number>();
  private readonly breaker: MasterBreaker | null;
  private readonly inputs: PlanInputs;
  private readonly logger: Logger | null;

  private readonly mayWrite: (masterAccountId: string) => boolean;
  /**
   * Whether broker writes pass the write gate (a worker under leases). Without a lease there is nothing for the
   * gate to refuse, and not opening it keeps its AsyncLocalStorage unused: on Node 20 and 22 its first use turns
   * on promise hooks for every promise of the process (a 1000-Slave fan-out's hand-off paid them ~7 times a send).
   */
  private readonly fenced: boolean;
  private readonly heldSlavesMaxAgeMs: number;
  private readonly sleep: ((ms: number) => Promise<void>) | undefined;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    readonly dispatcher: Dispatcher,
    opts: CopyEngineOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.preTradeCheck = opts.preTradeCheck;
    this.mayWrite = opts.mayWrite ?? (() => true);
    this.fenced = opts.mayWrite !== undefined;
    this.heldSlavesMaxAgeMs = opts.heldSlavesMaxAgeMs ?? 1000;
    this.sleep = opts.sleep;
    this.logger = opts.logger || null;
    this.writer = new OutcomeWriter(store, opts.logger ?? false);
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
  async idle(masterAccountId: string): Promise<void> {
    const set = this.pending.get(masterAccountId);
    if (set && set.size > 0) await Promise.allSettled([...set]);
  }

  slavesOf(master: Account): Promise<Slave[]> {
    return groupSlaves(this.store, this.adapters, master);
  }

  async copy(from: Account, action: MasterAction, opts: CopyOptions = {}): Promise<CopyResult> {
    const t0 = performance.now();
    this.lastCopy.set(from.id, this.clock());
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
    for (const p of sends) this.inFlight.add(p.row.id);
    const t1 = performance.now();
    const rows = planned.map((p) => p.row);
    // Each row names the Slave's rule revision it was planned under (the store keeps it in the rule's JSON).
    for (const p of planned) if (p.slave.rule.revision !== undefined) p.row.ruleRevision = p.slave.rule.revision;
    const masterOutcome = opts.masterOutcome;
    const refPrice = masterOutcome?.fillPrice ?? (action.type === 'market' ? action.price : null);
    const forget = () => {
      for (const p of sends) this.inFlight.delete(p.row.id);
    };
    const notRecorded = { tradeId, recorded: false, dispatched: 0, done: Promise.resolve() };
    let deferred: NewEvent[] | null = null;
    if (opts.tradeId) {
      const events = [...(opts.events?.(sends.length) ?? []), ...orderRouteEvents(master, action, tradeId, rows)];
      const recorded = await this.store.trades
        .recordIntents(
          tradeId,
          fanoutTradeSet(action, sends.length, refPrice, masterOutcome),
          rows,
          events,
          action.item.itemId ? [action.item] : [],
        )
        .catch((err: unknown) => {
          forget();
          throw err;
        });
      // Another pass (the route, or the settle loop after a crash) fanned this trade out already.
      if (!recorded) {
        forget();
        return notRecorded;
      }
    } else {
      const trade = actionTrade(master, action, tradeId, opts, sends.length, refPrice);
      const events = actionEvents(trade, rows);
      if (sends.length > 0) {
        deferred = events;
        this.accepting.add(tradeId);
      }
      const recorded = await this.store.trades
        .recordAction(
          trade,
          rows,
          opts.source === 'reconciler' ? [] : [action.item],
          sends.length > 0 ? [] : events,
          recent ? { groupId: master.groupId!, settled: recent.settled } : undefined,
        )
        .catch((err: unknown) => {
          forget();
          this.accepting.delete(tradeId);
          throw err;
        });
      if (!recorded) {
        this.accepting.delete(tradeId);
        forget();
        return notRecorded;
      }
    }
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
          .finally(() => this.accepting.delete(tradeId))
      : Promise.resolve();
    const done = Promise.all([accepted, ...dispatched]).then(() => undefined);
    this.track(master.id, done);
    return { tradeId, recorded: true, dispatched: sends.length, done };
  }

  private track(masterId: string, p: Promise<void>): void {
    let set = this.pending.get(masterId);
    if (!set) this.pending.set(masterId, (set = new Set()));
    const tracked = this.dispatcher.track(p).catch(() => undefined);
    set.add(tracked);
    void tracked.finally(() => set!.delete(tracked));
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
    // In inFlight since copy() put it there before the record; out of it once its outcome is written.
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
      await this.sendOp(master, tradeId, trade, p.row as CopyIntent, p.slave, op, 1, { ...latency }, recordedAt);
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** Sends one op, settles a timeout by one look at the broker, and writes the outcome. */
  sendOp(
    master: Account,
    tradeId: string,
    trade: TradeLike,
    row: CopyIntent,
    slave: Slave,
    op: IntentOp,
    attempt: number,
    latency: Record<string, number>,
    queuedAt: number,
    prevTags: string[] = [],
  ): Promise<OrderOutcome> {
    // Counted from before the write gate to the outcome: `writesEnded` waits for every one of them (a hand-over).
    this.lastCopy.set(master.id, this.clock());
    const p = this.sendOpNow(master, tradeId, trade, row, slave, op, attempt, latency, queuedAt, prevTags);
    // Only a worker under leases waits for them (at a hand-over); elsewhere the two promises and the set entry of
    // each send would be made for nobody, on the path to a fan-out's last send.
    if (!this.fenced) return p;
    let set = this.sending.get(master.id);
    if (!set) this.sending.set(master.id, (set = new Set()));
    const mine = set;
    const tracked = p.then(
      () => undefined,
      () => undefined,
    );
    mine.add(tracked);
    void tracked.then(() => {
      mine.delete(tracked);
      if (mine.size === 0 && this.sending.get(master.id) === mine) this.sending.delete(master.id);
    });
    return p;
  }

  /**
   * Resolves once no broker write of this Master's copies (a dispatch or a settle resend) is between its write gate
   * and its outcome: called after the Master's lease left the fence, nothing new passes the gate, so none can land
   * after this resolves. Writes are tracked only when the engine is fenced (`mayWrite` given); unfenced, this
   * resolves at once.
   */
  async writesEnded(masterAccountId: string): Promise<void> {
    for (let set = this.sending.get(masterAccountId); set && set.size > 0; set = this.sending.get(masterAccountId))
      await Promise.all([...set]);
  }

  /**
   * When this Master's last action was planned or a copy of it written (engine clock), 0 if none since this
   * process started: hand-overs pick the quietest.
   */
  lastCopyAt(masterAccountId: string): number {
    return this.lastCopy.get(masterAccountId) ?? 0;
  }

  private async sendOpNow(
    master: Account,
    tradeId: string,
    trade: TradeLike,
    row: CopyIntent,
    slave: Slave,
    op: IntentOp,
    attempt: number,
    latency: Record<string, number>,
    queuedAt: number,
    prevTags: string[],
  ): Promise<OrderOutcome> {
    const adapter = slave.adapter!;
    // Unsent, the row stays as recorded: the lease's new holder settles it (lookup by tag, then its own send).
    if (!this.mayWrite(master.id)) this.refuse(master.id);
    const sendAt = performance.now();
    latency.send = sendAt - queuedAt;
    const stale = goesStale(intentAction(row.action));
    const platform = slave.account.platform;
    const observer = this.observer;
    // The send and its answer hook are plain functions, not one more async frame per send: a fan-out's thousand
    // of them live until their brokers answer, and what each allocates before its write is the hand-off's cost.
    let outcome = await sendPaced(
      () =>
        executeOp(adapter, op, (fn) =>
          // Asked again at the moment of the write: the wait for a token or a rate-limit hint may outlast the lease.
          this.dispatcher.run(
            slave.account.id,
            adapter,
            this.fenced
              ? () =>
                  fencedCall(
                    () => this.mayWrite(master.id),
                    () => this.refuse(master.id),
                    fn,
                  )
              : fn,
          ),
        ),
      () =>
        copyRetryWindow({
          now: this.clock,
          sleep: this.sleep,
          holds: { registry: this.retrying, accountId: slave.account.id, topic: openTopic(master.id, row, trade) },
          actionAt: trade.actionAt.getTime(),
          maxDelayMs: slave.rule.maxDelayMs,
          addsExposure: stale,
          slaveStatus: async () => (await this.store.accounts.byId(slave.account.id))?.status ?? null,
        }),
      observer ? (o, retry) => observer.answered(platform, o, retry > 0) : undefined,
    );
    latency.ack = performance.now() - sendAt;
    // One look at the broker settles a lone timeout at once. Not while more writes of this connection are queued
    // or on the wire (a burst) where the adapter reads all its tags at once: a lookup each (positions, orders and,
    // for an absent tag, the whole order history, behind the broker's read limits) kept the burst's timed-out
    // writes from the settle pass, which reads the Slave's tags once for all of them (tag-snapshot.ts), until
    // they were older than the rule's limit and refused as stale.
    if (outcome.kind === 'unresolved' && !(adapter.tagIndex && this.dispatcher.busy(slave.account.id))) {
      const v = await verifyOp(adapter, op, [row.tag]);
      if (v.state === 'applied') outcome = v.outcome;
    }
    await this.writer.push(
      outcomeWrite(master, tradeId, trade, row, slave.account.id, op, outcome, {
        attempts: attempt,
        latency,
        prevTags,
      }),
    );
    this.observer?.settled(platform, outcome, latency, attempt);
    // Settled as soon as the broker can answer, before the action ages past the rule's staleness limit.
    if (outcome.kind === 'unresolved') this.onUnresolved?.();
    return outcome;
  }

  private refuse(masterAccountId: string): never {
    throw new StaleLeaseError(accountLeaseKey(masterAccountId), undefined, null);
  }

  async flush(): Promise<void> {
    await this.writer.idle();
  }
}

/** An open's wait is ended when the Master closes what it would open (AccountWatch tells RetryHolds.supersede). */
function openTopic(masterId: string, row: CopyIntent, trade: TradeLike): string | undefined {
  if (!goesStale(intentAction(row.action))) return undefined;
  if (trade.orderType !== 'market' && trade.masterOrderId) return retryTopic(masterId, 'order', trade.masterOrderId);
  return trade.masterPositionId ? retryTopic(masterId, 'position', trade.masterPositionId) : undefined;
}
