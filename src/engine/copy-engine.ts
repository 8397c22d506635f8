import { Decimal, roundToStep } from '../domain/decimal.js';
import { isEligibleSlave, type Account } from '../domain/account.js';
import { withDefaults, type CopyRule } from '../domain/copy-rule.js';
import { correlationTag } from '../domain/correlation.js';
import { newId } from '../domain/ids.js';
import { quoteToAccount } from '../domain/quote-currency.js';
import { sizeVolume } from '../domain/sizing.js';
import type { InstrumentSpec, Side } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { IntentRow, LinkChange, LinkKind, LinkRow, NewIntent, NewTrade, OutcomeWrite, TradeRow } from '../store/repos/trades.js';
import type { NewEvent } from '../store/repos/events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Dispatcher } from './dispatcher.js';
import { outcomeFields } from './dispatcher.js';
import { RISK_ADDING, STALE_ACTIONS, type MasterAction } from './actions.js';
import { rateLimitWaitMs } from './rate-limit.js';
import { executeOp, opOf, verifyOp, type IntentOp } from './intent-ops.js';
import { OutcomeWriter } from './outcome-writer.js';
import { proportionalClose } from './partial-close.js';
import { planOpen, type PreTradeCheck, type SlaveContext } from './planner.js';
import { actionEvents } from './action-events.js';
import { needsMarket, slaveMarket } from './slave-market.js';
import { MasterBreaker, type BreakerOptions } from './circuit-breaker.js';

export interface CopyOptions {
  /** API path: the trade row already exists (recorded before the Master broker was called). */
  tradeId?: string;
  source?: 'api' | 'watcher' | 'reconciler';
  /** The Master broker's answer on the API path (fill price, ids). */
  masterOutcome?: OrderOutcome & { kind: 'confirmed' };
  requestId?: string | null;
  /** Only these Slaves (the reconciler heals one Slave at a time). */
  onlySlaves?: Set<string>;
  /** Reconciler heals: the row's action name (heal_open, heal_close, ...). */
  intentAction?: string;
  /** Targets for heals of follow-up kind, per Slave. */
  targets?: Map<string, LinkRow[]>;
  /** Watcher: actions its start diff found missed while the service was down (the circuit breaker skips them). */
  catchUp?: boolean;
  /** Extra events recorded with the intents (the order route's order.accepted), given the number of sends. */
  events?: (copiedTo: number) => NewEvent[];
}

export interface CopyResult {
  tradeId: string;
  /** False when the action id was recorded before: nothing was planned or sent again. */
  recorded: boolean;
  dispatched: number;
  /** Resolves when every dispatched copy has its outcome written. */
  done: Promise<void>;
}

interface Slave { account: Account; rule: CopyRule; adapter: BrokerAdapter | null }

interface Planned {
  row: NewIntent & { id: string; tag: string; action: string; symbol: string; side: string; state: string };
  slave: Slave;
  /** Set when the row is to be sent. */
  send: boolean;
  link: LinkRow | null;
}

/** Sends of one copy refused for the broker's rate limit before the refusal is its outcome. */
const RATE_LIMIT_RETRIES = 4;

const str = (d: Decimal | null | undefined) => (d === null || d === undefined ? null : d.toString());
const opposite = (s: Side): Side => (s === 'buy' ? 'sell' : 'buy');

export interface CopyEngineOptions {
  clock?: () => number;
  preTradeCheck?: PreTradeCheck;
  /** Per-Master ceiling on actions in a window (circuit-breaker.ts); off when absent. */
  breaker?: BreakerOptions;
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
  private readonly specs = new WeakMap<BrokerAdapter, Map<string, Promise<InstrumentSpec | null>>>();
  private readonly knownSpecs = new WeakMap<BrokerAdapter, Map<string, InstrumentSpec>>();
  /** Intents being sent by this process: the settle loop leaves them alone. */
  readonly inFlight = new Set<string>();
  /** Order-route trades whose route is still running in this process: the settle loop leaves them alone. */
  readonly ordering = new Set<string>();
  /** Trades recorded by this process whose move to accepted is still to be written. */
  readonly accepting = new Set<string>();
  /** Called when a write's outcome stays unknown after its one lookup (main wires the settle loop's nudge). */
  onUnresolved: (() => void) | undefined;
  /** Per Master account, copies still being dispatched: follow-ups of the same account wait for them. */
  private readonly pending = new Map<string, Set<Promise<void>>>();
  private readonly breaker: MasterBreaker | null;

  constructor(private readonly store: Store, private readonly adapters: AdapterRegistry, private readonly dispatcher: Dispatcher, opts: CopyEngineOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.preTradeCheck = opts.preTradeCheck;
    this.writer = new OutcomeWriter(store);
    this.breaker = opts.breaker ? new MasterBreaker(opts.breaker, this.clock) : null;
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
    const { reason } = trip;
    if (await this.store.accounts.setStatusIf(master.id, master.status, 'paused', reason)) {
      await this.store.events.emit([
        { userId: master.userId, accountId: master.id, type: 'account.circuit_breaker_tripped', payload: { actions: trip.actions, windowMs: trip.windowMs, ceiling: trip.ceiling, reason } },
        { userId: master.userId, accountId: master.id, type: 'account.status_changed', payload: { before: master.status, after: 'paused', reason } },
      ]);
    }
    return { ...master, status: 'paused', statusReason: reason };
  }

  /** Waits until every copy of this Master account dispatched so far has its outcome (links exist for what follows). */
  async idle(masterAccountId: string): Promise<void> {
    const set = this.pending.get(masterAccountId);
    if (set && set.size > 0) await Promise.allSettled([...set]);
  }

  async slavesOf(master: Account): Promise<Slave[]> {
    if (!master.groupId) return [];
    const accounts = (await this.store.accounts.list(master.userId, { groupId: master.groupId })).filter((a) => a.role === 'slave');
    const rules = await this.store.accounts.rulesFor(accounts.map((a) => a.id));
    // Always through forAccount: the shadow mode decorates it to hand out a Slave's simulated twin.
    return Promise.all(accounts.map(async (account) => ({
      account, rule: rules.get(account.id) ?? withDefaults(undefined), adapter: await this.adapters.forAccount(account).catch(() => null),
    })));
  }

  /** Instrument specs rarely change and every copy needs one per Slave: cached per live adapter. */
  spec(adapter: BrokerAdapter, symbol: string): Promise<InstrumentSpec | null> {
    let m = this.specs.get(adapter);
    if (!m) this.specs.set(adapter, (m = new Map()));
    let p = m.get(symbol);
    if (!p) {
      // A read refused under a burst is not "not listed": asked again twice before the copy is given up.
      p = retry(() => adapter.instrument(symbol), [150, 500]).catch(() => null);
      m.set(symbol, p);
      void p.then((s) => {
        if (s) this.knownSpecs.get(adapter)?.set(symbol, s) ?? this.knownSpecs.set(adapter, new Map([[symbol, s]]));
        else m!.delete(symbol);
      });
    }
    return p;
  }

  /** The cached spec without a promise per Slave (a fan-out to 1000 Slaves asks 1000 times). */
  private specNow(adapter: BrokerAdapter, symbol: string): InstrumentSpec | undefined {
    return this.knownSpecs.get(adapter)?.get(symbol);
  }

  async copy(from: Account, action: MasterAction, opts: CopyOptions = {}): Promise<CopyResult> {
    const t0 = performance.now();
    const master = await this.guard(from, opts);
    const tradeId = opts.tradeId ?? newId('trd');
    let slaves = await this.slavesOf(master);
    if (opts.onlySlaves) slaves = slaves.filter((s) => opts.onlySlaves!.has(s.account.id));
    const planned = await this.plan(master, action, tradeId, slaves, opts);
    const planMs = performance.now() - t0;

    const sends = planned.filter((p) => p.send);
    // Ours from the moment they are durable: the settle loop must not take them for orphans of a crash.
    for (const p of sends) this.inFlight.add(p.row.id);
    const t1 = performance.now();
    const rows = planned.map((p) => p.row);
    const masterOutcome = opts.masterOutcome;
    const refPrice = masterOutcome?.fillPrice ?? (action.type === 'market' ? action.price : null);
    let deferred: { trade: NewTrade & { id: string }; events: NewEvent[] } | null = null;
    if (opts.tradeId) {
      const events = [...(opts.events?.(sends.length) ?? []), ...actionEvents({ id: tradeId, userId: master.userId, masterAccountId: master.id, source: 'api', action: action.kind, symbol: action.symbol, side: action.side, volume: action.volume.toString(), masterPositionId: null, fillPrice: null, stopLoss: null, takeProfit: null, masterOutcome: null }, rows as IntentRow[])];
      const recorded = await this.store.trades.recordIntents(tradeId, {
        status: 'accepted', copiedTo: sends.length, masterPositionId: masterOutcome?.positionId ?? action.positionId, masterOrderId: masterOutcome?.brokerOrderId ?? action.orderId,
        fillPrice: str(refPrice), ...(masterOutcome ? { masterOutcome: outcomeFields(masterOutcome).outcome } : {}), actionAt: new Date(action.at),
      }, rows, events, action.item.itemId ? [action.item] : []).catch((err: unknown) => {
        for (const p of sends) this.inFlight.delete(p.row.id);
        throw err;
      });
      if (!recorded) {
        // Another pass (the route, or the settle loop after a crash) fanned this trade out already.
        for (const p of sends) this.inFlight.delete(p.row.id);
        return { tradeId, recorded: false, dispatched: 0, done: Promise.resolve() };
      }
    } else {
      const trade: NewTrade & { id: string } = {
        id: tradeId, userId: master.userId, masterAccountId: master.id, groupId: master.groupId, source: opts.source ?? 'watcher', action: action.kind,
        symbol: action.symbol, side: action.side, orderType: action.type, volume: action.volume.toString(), price: str(action.type === 'market' ? null : action.price),
        stopLoss: str(action.stopLoss), takeProfit: str(action.takeProfit), tag: correlationTag({ tradeId, accountId: master.id, action: action.kind }),
        // `recorded` until the sends are handed out: the events are written with the move to accepted (see actionEvents).
        status: sends.length > 0 ? 'recorded' : 'accepted',
        masterOutcome: { kind: 'observed', at: new Date(action.at).toISOString(), volumeAfter: action.item.volume }, masterPositionId: action.positionId, masterOrderId: action.orderId,
        fillPrice: str(refPrice), copiedTo: sends.length, actionId: action.id, actionAt: new Date(action.at), requestId: opts.requestId ?? null,
      };
      const events = actionEvents(trade as TradeRow, rows as IntentRow[]);
      if (sends.length > 0) {
        deferred = { trade, events };
        this.accepting.add(tradeId);
      }
      const recorded = await this.store.trades.recordAction(trade, rows, opts.source === 'reconciler' ? [] : [action.item], sends.length > 0 ? [] : events).catch((err: unknown) => {
        for (const p of sends) this.inFlight.delete(p.row.id);
        this.accepting.delete(tradeId);
        throw err;
      });
      if (!recorded) {
        this.accepting.delete(tradeId);
        for (const p of sends) this.inFlight.delete(p.row.id);
        return { tradeId, recorded: false, dispatched: 0, done: Promise.resolve() };
      }
    }
    const recordMs = performance.now() - t1;
    const trade = { orderType: action.type, masterPositionId: masterOutcome?.positionId ?? action.positionId, masterOrderId: masterOutcome?.brokerOrderId ?? action.orderId, fillPrice: str(refPrice), side: action.side, actionAt: new Date(action.at) };
    const dispatched = sends.map((p) => this.dispatch(master, tradeId, trade, p, { plan: planMs, record: recordMs }, t1 + recordMs));
    // Every send is handed out: the trade becomes accepted, with its events, in the first outcome batch.
    const accepted = deferred ? this.writer.push({ trade: { id: tradeId, set: { status: 'accepted' } }, events: deferred.events }).finally(() => this.accepting.delete(tradeId)) : Promise.resolve();
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

  // ---- planning -----------------------------------------------------------------------------------

  private async plan(master: Account, action: MasterAction, tradeId: string, slaves: Slave[], opts: CopyOptions): Promise<Planned[]> {
    const rowAction = opts.intentAction ?? action.kind;
    if (RISK_ADDING.has(action.kind)) return this.planAdding(master, action, tradeId, slaves, rowAction);
    if (action.kind === 'order_filled' && !opts.targets) {
      // A Slave that does not copy pending orders copies the position the fill opened, at market, when it opens.
      const atMarket = slaves.filter((s) => !s.rule.copyPendingOrders);
      const rest = slaves.filter((s) => s.rule.copyPendingOrders);
      const opened = atMarket.length === 0 ? [] : await this.planAdding(master, { ...action, type: 'market' }, tradeId, atMarket, 'open_on_fill');
      return [...opened, ...(await this.planFollow(master, action, tradeId, rest, opts, rowAction))];
    }
    return this.planFollow(master, action, tradeId, slaves, opts, rowAction);
  }

  private async planFollow(master: Account, action: MasterAction, tradeId: string, slaves: Slave[], opts: CopyOptions, rowAction: string): Promise<Planned[]> {
    const kind: LinkKind = action.kind.startsWith('order_') ? 'order' : 'position';
    const masterItemId = (kind === 'order' ? action.orderId : action.positionId)!;
    const out: Planned[] = [];
    const all = opts.targets ? null : await this.store.trades.linksOfMaster(master.id, masterItemId, kind);
    for (const slave of slaves) {
      const { account, rule, adapter } = slave;
      const mapped = rule.symbolMap[action.symbol] ?? action.symbol;
      const links = opts.targets?.get(account.id) ?? all!.filter((l) => l.slaveAccountId === account.id);
      const open = links.filter((l) => l.open);
      const base = (tag: string, targetId: string | null) => ({
        id: newId('int'), tradeId, slaveAccountId: account.id, tag, action: rowAction, symbol: mapped, side: (rule.reverse ? opposite(action.side) : action.side) as string, targetId,
      });
      if (open.length === 0) {
        const userClosed = links.some((l) => l.closedReason === 'user_closed');
        const reason = userClosed ? 'user_closed' : 'no_linked_position';
        const detail = userClosed ? 'the copy was closed outside the service; it is not copied again' : `no open copy of the Master's ${kind} ${masterItemId} on this account (see the open's ledger row)`;
        out.push({ row: { ...base(correlationTag({ tradeId, accountId: account.id, action: rowAction }), null), state: 'skipped', skipReason: `${reason}: ${detail}` }, slave, send: false, link: null });
        continue;
      }
      const spec = adapter ? await this.spec(adapter, mapped) : null;
      for (const link of open) {
        const tag = correlationTag({ tradeId, accountId: account.id, action: `${rowAction}:${link.slavePositionId}` });
        const row = base(tag, link.slavePositionId);
        const skip = (reason: string, detail: string): Planned => ({ row: { ...row, state: 'skipped', skipReason: `${reason}: ${detail}` }, slave, send: false, link });
        if (!adapter) { out.push(skip('broker_unavailable', 'the Slave broker adapter could not be opened')); continue; }
        const onGrid = (v: Decimal | null) => (v === null || !spec ? v : roundToStep(v, spec.tickSize));
        const [sl, tp] = rule.reverse ? [action.takeProfit, action.stopLoss] : [action.stopLoss, action.takeProfit];
        switch (action.kind) {
          case 'close':
          case 'order_cancelled':
            out.push({ row: { ...row, plannedVolume: link.volume, state: 'planned' }, slave, send: true, link });
            break;
          case 'reduce': {
            if (!spec || !link.volume || !action.prevVolume) { out.push(skip('unknown_symbol', `no instrument data or volume for ${mapped}: the proportional part cannot be sized`)); break; }
            const pc = proportionalClose({ masterBefore: action.prevVolume, closed: action.volume, slaveVolume: new Decimal(link.volume), step: spec.volumeStep, minVolume: spec.minVolume });
            if (pc.kind === 'skip') out.push(skip(pc.reason, pc.detail));
            // A rest below the broker minimum cannot stay open: this reduce becomes the full close (ledger says so).
            else if (pc.kind === 'full') out.push({ row: { ...row, action: rowAction.startsWith('heal') ? 'heal_close' : 'close', plannedVolume: link.volume, state: 'planned', skipReason: pc.detail ? `rounded_to_full_close: ${pc.detail}` : null }, slave, send: true, link });
            else out.push({ row: { ...row, plannedVolume: pc.volume.toString(), state: 'planned' }, slave, send: true, link });
            break;
          }
          case 'modify':
            if (!rule.copyStopLoss && !rule.copyTakeProfit) { out.push(skip('sltp_not_copied', 'the rule copies neither stop loss nor take profit')); break; }
            out.push({ row: { ...row, stopLoss: rule.copyStopLoss ? str(onGrid(sl)) : null, takeProfit: rule.copyTakeProfit ? str(onGrid(tp)) : null, plannedVolume: link.volume, state: 'planned' }, slave, send: true, link });
            break;
          case 'order_modified': {
            if (!spec) { out.push(skip('unknown_symbol', `the Slave's broker does not list ${mapped}`)); break; }
            const entry = onGrid(action.price);
            const sized = sizeVolume(rule, {
              masterVolume: action.volume, masterBalance: master.balance, masterEquity: master.equity, slaveBalance: account.balance, slaveEquity: account.equity,
              entryPrice: entry, stopLoss: rule.copyStopLoss ? onGrid(sl) : null, quoteToAccount: quoteToAccount(mapped, account.currency, entry),
            }, spec);
            out.push({ row: { ...row, plannedPrice: str(onGrid(action.price)), plannedVolume: sized.ok ? sized.volume.toString() : null, stopLoss: str(onGrid(sl)), takeProfit: str(onGrid(tp)), state: 'planned' }, slave, send: true, link });
            break;
          }
          case 'order_filled': {
            // A fill adds exposure: a Slave that may not take any (paused, locked, disconnected) or that the risk
            // guard refuses only has its pending copy cancelled, so it cannot fill later on its own.
            const refuse = (reason: string): Planned => ({ row: { ...row, action: 'order_cancelled', state: 'planned', skipReason: `${reason}; the pending copy is cancelled instead of filled` }, slave, send: true, link });
            if (!isEligibleSlave(account)) { out.push(refuse(`slave_not_eligible: account status is ${account.status}`)); break; }
            let volume = link.volume;
            if (this.preTradeCheck && spec && volume) {
              const decided = await this.preTradeCheck({ master, slave: account, rule, action: rowAction as never, symbol: mapped, side: row.side as Side, type: 'market', volume: new Decimal(volume), price: action.price, stopLoss: rule.copyStopLoss ? onGrid(sl) : null, spec });
              if (!decided.ok) { out.push(refuse(`${decided.code}: ${decided.message}`)); break; }
              if (decided.volume) volume = decided.volume.toString();
            }
            out.push({ row: { ...row, plannedVolume: volume, stopLoss: rule.copyStopLoss ? str(onGrid(sl)) : null, takeProfit: rule.copyTakeProfit ? str(onGrid(tp)) : null, state: 'planned' }, slave, send: true, link });
            break;
          }
          default:
            out.push(skip('not_supported', `action ${action.kind}`));
        }
      }
    }
    return out;
  }

  private async planAdding(master: Account, action: MasterAction, tradeId: string, slaves: Slave[], rowAction: string): Promise<Planned[]> {
    // A paused or locked Master (by the user, the risk guard or a panic-close) is not copied from, even when
    // trades keep arriving from its terminal. Closes and reductions still follow: they only take risk away.
    if (master.status !== 'connected' && master.status !== 'disconnected') {
      return slaves.map((slave) => ({
        row: { id: newId('int'), tradeId, slaveAccountId: slave.account.id, tag: correlationTag({ tradeId, accountId: slave.account.id, action: rowAction }), action: rowAction, symbol: slave.rule.symbolMap[action.symbol] ?? action.symbol, side: (slave.rule.reverse ? opposite(action.side) : action.side) as string, targetId: null, state: 'skipped', skipReason: `master_not_eligible: the Master is ${master.status}${master.statusReason ? ` (${master.statusReason})` : ''}` },
        slave, send: false, link: null,
      }));
    }
    const contexts: SlaveContext[] = [];
    const waits: Array<Promise<void>> = [];
    for (const s of slaves) {
      const symbol = s.rule.symbolMap[action.symbol] ?? action.symbol;
      const ctx: SlaveContext = { account: s.account, rule: s.rule, spec: null };
      if (s.adapter) {
        const known = this.specNow(s.adapter, symbol);
        if (known) ctx.spec = known;
        else waits.push(this.spec(s.adapter, symbol).then((spec) => { ctx.spec = spec; }));
        if (needsMarket(s.rule, action.type)) waits.push(slaveMarket(s.adapter, s.account, s.rule, symbol, action.type).then((m) => { Object.assign(ctx, m); }));
      }
      contexts.push(ctx);
    }
    if (waits.length > 0) await Promise.all(waits);
    const now = this.clock();
    const plan = planOpen({
      tradeId, masterAccount: master, symbol: action.symbol, side: action.side, type: action.type, volume: action.volume,
      price: action.type === 'market' ? null : action.price, stopLoss: action.stopLoss, takeProfit: action.takeProfit, at: action.at,
      fillPrice: action.type === 'market' ? action.price : null,
    }, contexts, now);
    // Never copy a Master position again to a Slave whose copy of it was closed by hand.
    const userClosed = action.kind === 'increase' && action.positionId
      ? new Set((await this.store.trades.linksOfMaster(master.id, action.positionId)).filter((l) => l.closedReason === 'user_closed').map((l) => l.slaveAccountId))
      : new Set<string>();
    const check = this.preTradeCheck;
    const planRow = (p: (typeof plan)[number], i: number, decided: Awaited<ReturnType<PreTradeCheck>> | null): Planned => {
      const slave = slaves[i]!;
      const refPrice = action.type === 'market' ? action.price : p.kind === 'send' ? p.price : null;
      const row = { id: newId('int'), tradeId, slaveAccountId: slave.account.id, tag: p.tag, action: rowAction, symbol: p.symbol, side: p.side as string, targetId: null };
      const skip = (reason: string, detail: string): Planned => ({ row: { ...row, state: 'skipped', skipReason: `${reason}: ${detail}` }, slave, send: false, link: null });
      if (p.kind === 'skip') return skip(p.reason, p.detail);
      if (!slave.adapter) return skip('broker_unavailable', 'the Slave broker adapter could not be opened');
      if (userClosed.has(slave.account.id)) return skip('user_closed', 'the copy of this Master position was closed outside the service; it is not copied again');
      let volume = p.volume;
      if (decided) {
        if (!decided.ok) return { row: { ...row, plannedVolume: volume.toString(), state: 'denied', skipReason: `${decided.code}: ${decided.message}`, outcome: { kind: 'denied', code: decided.code, message: decided.message } }, slave, send: false, link: null };
        if (decided.volume) volume = decided.volume;
      }
      return {
        row: { ...row, plannedVolume: volume.toString(), plannedPrice: str(refPrice), stopLoss: str(p.stopLoss), takeProfit: str(p.takeProfit), state: 'planned' },
        slave, send: true, link: null,
      };
    };
    if (!check) return plan.map((p, i) => planRow(p, i, null));
    return Promise.all(plan.map(async (p, i) => {
      const slave = slaves[i]!;
      const spec = contexts[i]!.spec;
      const decided = p.kind === 'send' && spec && slave.adapter && !userClosed.has(slave.account.id)
        ? await check({ master, slave: slave.account, rule: slave.rule, action: rowAction as never, symbol: p.symbol, side: p.side, type: p.type, volume: p.volume, price: p.price ?? action.price, stopLoss: p.stopLoss, spec })
        : null;
      return planRow(p, i, decided);
    }));
  }

  // ---- dispatch and outcomes ----------------------------------------------------------------------

  private async dispatch(master: Account, tradeId: string, trade: TradeLike, p: Planned, latency: Record<string, number>, recordedAt: number): Promise<void> {
    const adapter = p.slave.adapter!;
    const id = p.row.id;
    this.inFlight.add(id);
    try {
      const fresh = this.clock() - trade.actionAt.getTime() <= p.slave.rule.maxDelayMs;
      const origTag = p.row.action === 'order_filled' && p.link?.intentId ? (await this.store.trades.intentById(p.link.intentId))?.tag ?? null : null;
      const op = opOf(p.row as IntentRow, trade, p.slave.rule, { origTag, fresh, linkVolume: p.link?.volume ? new Decimal(p.link.volume) : null });
      await this.sendOp(master, tradeId, trade, p.row as IntentRow, p.slave, op, 1, { ...latency }, recordedAt);
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** Sends one op, settles a timeout by one look at the broker, and writes the outcome. */
  async sendOp(master: Account, tradeId: string, trade: TradeLike, row: IntentRow, slave: Slave, op: IntentOp, attempt: number, latency: Record<string, number>, queuedAt: number, prevTags: string[] = []): Promise<OrderOutcome> {
    const adapter = slave.adapter!;
    const sendAt = performance.now();
    latency.send = sendAt - queuedAt;
    let outcome: OrderOutcome;
    for (let retry = 0; ; retry++) {
      try {
        outcome = await executeOp(adapter, op, (fn) => this.dispatcher.run(slave.account.id, adapter, fn));
      } catch (err) {
        // An adapter that throws on a write broke its contract; we cannot know if it applied: unresolved.
        outcome = { kind: 'unresolved', code: 'adapter_error', message: err instanceof Error ? err.message : String(err) };
      }
      // Refused for going too fast proves nothing was applied: the same write again after the broker's hint,
      // a few times, while the copy is still fresh (a burst shared by several connections of one broker login).
      const wait = rateLimitWaitMs(outcome, 1000);
      if (wait === null || retry >= RATE_LIMIT_RETRIES) break;
      const waitMs = Math.min(wait, 30_000);
      if (STALE_ACTIONS.has(row.action) && this.clock() + waitMs - trade.actionAt.getTime() > slave.rule.maxDelayMs) break;
      await new Promise((r) => setTimeout(r, waitMs));
    }
    latency.ack = performance.now() - sendAt;
    if (outcome.kind === 'unresolved') {
      const v = await verifyOp(adapter, op, [row.tag]);
      if (v.state === 'applied') outcome = v.outcome;
    }
    await this.writer.push(this.outcomeWrite(master, tradeId, trade, row, slave, op, outcome, { attempts: attempt, latency, prevTags }));
    // Settled as soon as the broker can answer, before the action ages past the rule's staleness limit.
    if (outcome.kind === 'unresolved') this.onUnresolved?.();
    return outcome;
  }

  outcomeWrite(master: Account, tradeId: string, trade: TradeLike, row: Pick<IntentRow, 'id' | 'action' | 'symbol' | 'side' | 'plannedVolume' | 'tag' | 'targetId'>, slave: Slave, op: IntentOp, outcome: OrderOutcome, extra: { attempts?: number; latency?: Record<string, number>; prevTags?: string[] }): OutcomeWrite {
    const fields = outcomeFields(outcome);
    const userId = master.userId;
    const sid = slave.account.id;
    const volume = row.plannedVolume ?? '0';
    const base = { tradeId, intentId: row.id, symbol: row.symbol, side: row.side, volume };
    const links: LinkChange[] = [];
    const events: NewEvent[] = [];
    let slippage: string | null = null;
    if (outcome.kind === 'confirmed') {
      const filled = outcome.filledVolume?.toString() ?? volume;
      const isOpenLike = op.kind === 'place' || op.kind === 'fill';
      if (outcome.fillPrice && trade.fillPrice && (isOpenLike || op.kind === 'close') && (!isOpenLike || (op.kind === 'place' && op.req.type === 'market') || op.kind === 'fill')) {
        // Positive = worse for the Slave than the Master's price, on the side the Slave traded.
        const execSide: Side = isOpenLike ? (row.side as Side) : opposite(row.side as Side);
        if (isOpenLike ? row.side === trade.side : true) {
          const diff = outcome.fillPrice.minus(trade.fillPrice);
          slippage = (execSide === 'buy' ? diff : diff.neg()).toString();
        }
      }
      events.push({ userId, accountId: sid, type: 'copy.confirmed', payload: { ...base, positionId: outcome.positionId, orderId: outcome.brokerOrderId, fillPrice: str(outcome.fillPrice), filledVolume: str(outcome.filledVolume), slippage } });
      switch (op.kind) {
        case 'place':
        case 'fill': {
          if (op.kind === 'fill') links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId }, reason: 'filled' });
          const masterPos = op.kind === 'fill' ? op.masterPositionId : op.link === 'position' ? op.masterItemId : null;
          if (outcome.positionId && masterPos) {
            links.push({ op: 'upsert', link: { id: newId('act'), kind: 'position', masterAccountId: master.id, masterPositionId: masterPos, slaveAccountId: sid, slavePositionId: outcome.positionId, intentId: row.id, volume: filled } });
            events.push({ userId, accountId: sid, type: 'position.opened', payload: { role: 'slave', intentId: row.id, tradeId, positionId: outcome.positionId, symbol: row.symbol, side: row.side, volume: filled, price: str(outcome.fillPrice), masterPositionId: masterPos } });
          } else if (op.kind === 'place' && op.link === 'order' && outcome.brokerOrderId && op.masterItemId) {
            links.push({ op: 'upsert', link: { id: newId('act'), kind: 'order', masterAccountId: master.id, masterPositionId: op.masterItemId, slaveAccountId: sid, slavePositionId: outcome.brokerOrderId, intentId: row.id, volume } });
          }
          break;
        }
        case 'close':
          if (op.volume) {
            links.push({ op: 'adjust', key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId }, by: `-${outcome.filledVolume?.toString() ?? op.volume.toString()}` });
            events.push({ userId, accountId: sid, type: 'position.modified', payload: { role: 'slave', positionId: op.positionId, symbol: row.symbol, volume: op.before ? op.before.minus(outcome.filledVolume ?? op.volume).toString() : undefined, intentId: row.id } });
          } else {
            links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId }, reason: row.action.startsWith('heal') ? 'orphan_closed' : 'master_closed' });
            events.push({ userId, accountId: sid, type: 'position.closed', payload: { role: 'slave', positionId: op.positionId, symbol: row.symbol, side: row.side, volume, price: str(outcome.fillPrice), reason: 'copy' } });
          }
          break;
        case 'modify':
          events.push({ userId, accountId: sid, type: 'position.modified', payload: { role: 'slave', positionId: op.positionId, symbol: row.symbol, stopLoss: str(op.stopLoss), takeProfit: str(op.takeProfit), intentId: row.id } });
          break;
        case 'cancel':
          links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId }, reason: 'cancelled' });
          break;
        case 'modify_order':
          break;
      }
    } else {
      events.push({ userId, accountId: sid, type: `copy.${outcome.kind}`, payload: { ...base, code: outcome.code, message: outcome.message } });
      if (outcome.kind === 'rejected') {
        // The broker no longer has what the copy addressed: it was closed or cancelled outside the service.
        if ((op.kind === 'close' || op.kind === 'modify') && outcome.code === 'position_not_found') links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId }, reason: 'user_closed' });
        if ((op.kind === 'cancel' || op.kind === 'modify_order') && outcome.code === 'order_not_found') links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId }, reason: 'gone' });
        if (op.kind === 'fill' && (outcome.code === 'slave_order_gone' || outcome.code === 'stale_action')) links.push({ op: 'close', key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId }, reason: outcome.code });
      }
    }
    return {
      intentId: row.id,
      update: {
        ...fields, slippage, ...(extra.latency ? { latency: extra.latency } : {}), ...(extra.attempts !== undefined ? { attempts: extra.attempts } : {}),
        tag: row.tag, ...(extra.prevTags && extra.prevTags.length > 0 ? { prevTags: extra.prevTags } : {}),
      },
      links,
      events,
    };
  }

  async flush(): Promise<void> {
    await this.writer.idle();
  }
}

export type TradeLike = Pick<TradeRow, 'orderType' | 'masterPositionId' | 'masterOrderId' | 'fillPrice' | 'side'> & { actionAt: Date };

async function retry<T>(fn: () => Promise<T>, waitsMs: number[]): Promise<T> {
  for (const ms of waitsMs) {
    try {
      return await fn();
    } catch {
      await new Promise((r) => setTimeout(r, ms));
    }
  }
  return fn();
}
