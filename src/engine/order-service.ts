import { Decimal, isMultipleOf } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { correlationTag } from '../domain/correlation.js';
import { AppError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { OrderType, Side } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { NewIntent } from '../store/repos/trades.js';
import type { NewEvent } from '../store/repos/events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import { Dispatcher, outcomeFields } from './dispatcher.js';
import { planOpen, type PlannedCopy, type SlaveContext } from './planner.js';

export interface OrderInput {
  symbol: string;
  side: Side;
  volume: Decimal;
  type: OrderType;
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
}

export interface OrderResult {
  tradeId: string;
  status: 'accepted';
  copiedTo: number;
  masterPositionId: string | null;
  masterOrderId: string | null;
  fillPrice: Decimal | null;
  /** Resolves when every dispatched copy has its outcome (tests and the CLI wait on it; the API does not). */
  copies: Promise<void>;
}

/**
 * Step 1 of the pipeline driven by the API: the Master's write goes first and its outcome decides; then one
 * intent per Slave is planned, recorded in one transaction, and dispatched in parallel.
 */
export class OrderService {
  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly dispatcher: Dispatcher,
    private readonly clock: () => number = Date.now,
  ) {}

  async send(userId: string, masterAccountId: string, input: OrderInput, requestId: string | null): Promise<OrderResult> {
    const master = await this.store.accounts.owned(userId, masterAccountId);
    if (!master) throw notFound('account');
    if (master.role !== 'master') throw new AppError('account_not_master', `account ${master.id} is a ${master.role}; orders are sent to a Master account`);
    if (master.status !== 'connected') throw new AppError('account_not_connected', `account ${master.id} is ${master.status}; it must be connected to take orders`);
    const adapter = await this.adapters.forAccount(master);
    await this.validate(adapter, input);

    const receivedAt = this.clock();
    const tradeId = newId('trd');
    const tag = correlationTag({ tradeId, accountId: master.id, action: 'open' });
    await this.store.trades.insertTrade({
      id: tradeId, userId, masterAccountId: master.id, groupId: master.groupId, source: 'api', action: 'open',
      symbol: input.symbol, side: input.side, orderType: input.type, volume: input.volume.toString(),
      price: input.price?.toString() ?? null, stopLoss: input.stopLoss?.toString() ?? null, takeProfit: input.takeProfit?.toString() ?? null,
      tag, status: 'pending', requestId,
    });

    const outcome = await this.settle(adapter, tag, await adapter.placeOrder({ ...input, tag }));
    if (outcome.kind !== 'confirmed') {
      const status = outcome.kind === 'unresolved' ? 'unresolved' : 'rejected';
      await this.store.trades.updateTrade(tradeId, { status, masterOutcome: { kind: outcome.kind, code: outcome.code, message: outcome.message } }, [
        { userId, accountId: master.id, type: `order.${status}`, payload: { tradeId, requestId, symbol: input.symbol, side: input.side, volume: input.volume.toString(), code: outcome.code, message: outcome.message } },
      ]);
      if (outcome.kind === 'unresolved') {
        throw new AppError('write_outcome_unknown', `the Master's broker did not confirm the order in time and it could not be found by its tag yet; check trade ${tradeId} before retrying`, { details: { tradeId } });
      }
      throw new AppError('invalid_request', `the Master's broker refused the order: ${outcome.message}`, { details: { tradeId, brokerCode: outcome.code } });
    }

    const copies = await this.fanOut(master, tradeId, input, outcome, receivedAt);
    return {
      tradeId, status: 'accepted', copiedTo: copies.dispatched, masterPositionId: outcome.positionId, masterOrderId: outcome.brokerOrderId,
      fillPrice: outcome.fillPrice, copies: copies.done,
    };
  }

  /** Bad input is a clear 400 before anything reaches a broker. */
  private async validate(adapter: BrokerAdapter, input: OrderInput): Promise<void> {
    if (input.type !== 'market' && !adapter.capabilities.orderTypes.includes(input.type)) {
      throw invalid(`this account's platform does not take ${input.type} orders`);
    }
    if (input.type !== 'market' && input.price === null) throw invalid(`price is required for a ${input.type} order`);
    const spec = await adapter.instrument(input.symbol);
    if (!spec) throw invalid(`unknown symbol ${input.symbol} at the Master's broker`, { field: 'symbol' });
    if (input.volume.lt(spec.minVolume) || input.volume.gt(spec.maxVolume)) {
      throw invalid(`volume must be between ${spec.minVolume} and ${spec.maxVolume} for ${input.symbol}`, { field: 'volume' });
    }
    if (!isMultipleOf(input.volume, spec.volumeStep)) {
      throw invalid(`volume must be a multiple of ${spec.volumeStep} for ${input.symbol}`, { field: 'volume' });
    }
    for (const [field, v] of [['price', input.price], ['stopLoss', input.stopLoss], ['takeProfit', input.takeProfit]] as const) {
      if (v !== null && !isMultipleOf(v, spec.tickSize)) throw invalid(`${field} must be a multiple of the tick size ${spec.tickSize} for ${input.symbol}`, { field });
    }
  }

  /** A timeout is settled by asking the broker for the tag, once, before anyone decides anything. */
  private async settle(adapter: BrokerAdapter, tag: string, outcome: OrderOutcome): Promise<OrderOutcome> {
    if (outcome.kind !== 'unresolved') return outcome;
    const found = await adapter.findByTag(tag).catch(() => null);
    if (found?.position) {
      return { kind: 'confirmed', brokerOrderId: found.order?.id ?? null, positionId: found.position.id, filledVolume: found.position.volume, fillPrice: found.position.openPrice, brokerTime: found.position.openedAt };
    }
    if (found?.order) {
      return { kind: 'confirmed', brokerOrderId: found.order.id, positionId: found.order.positionId, filledVolume: found.order.filledVolume, fillPrice: found.order.price, brokerTime: found.order.createdAt };
    }
    return outcome;
  }

  private async fanOut(master: Account, tradeId: string, input: OrderInput, masterOutcome: OrderOutcome & { kind: 'confirmed' }, receivedAt: number) {
    const t0 = performance.now();
    const slaves = master.groupId ? (await this.store.accounts.list(master.userId, { groupId: master.groupId })).filter((a) => a.role === 'slave') : [];
    const rules = await this.store.accounts.rulesFor(slaves.map((s) => s.id));
    const adapters = new Map<string, BrokerAdapter>();
    const contexts: SlaveContext[] = await Promise.all(slaves.map(async (account) => {
      const rule = rules.get(account.id)!;
      const adapter = await this.adapters.forAccount(account).catch(() => null);
      if (adapter) adapters.set(account.id, adapter);
      const symbol = rule.symbolMap[input.symbol] ?? input.symbol;
      const spec = adapter ? await adapter.instrument(symbol).catch(() => null) : null;
      return { account, rule, spec };
    }));
    const plan = planOpen({ tradeId, masterAccount: master, ...input, at: receivedAt }, contexts, this.clock()).map((p): PlannedCopy => {
      if (p.kind === 'send' && !adapters.has(p.slave.id)) return { kind: 'skip', slave: p.slave, tag: p.tag, symbol: p.symbol, side: p.side, reason: 'broker_unavailable', detail: 'the Slave broker adapter could not be opened' };
      return p;
    });
    const planMs = performance.now() - t0;

    const rows: NewIntent[] = plan.map((p) => ({
      id: newId('int'), tradeId, slaveAccountId: p.slave.id, tag: p.tag, action: 'open', symbol: p.symbol, side: p.side,
      plannedVolume: p.kind === 'send' ? p.volume.toString() : null,
      plannedPrice: p.kind === 'send' ? (p.price ?? masterOutcome.fillPrice)?.toString() ?? null : null,
      stopLoss: p.kind === 'send' ? p.stopLoss?.toString() ?? null : null,
      takeProfit: p.kind === 'send' ? p.takeProfit?.toString() ?? null : null,
      state: p.kind === 'send' ? 'planned' : 'skipped',
      skipReason: p.kind === 'skip' ? `${p.reason}: ${p.detail}` : null,
    }));
    const sends = plan.filter((p) => p.kind === 'send').length;
    const userId = master.userId;
    const events: NewEvent[] = [
      { userId, accountId: master.id, type: 'order.accepted', payload: { tradeId, symbol: input.symbol, side: input.side, volume: input.volume.toString(), copiedTo: sends, positionId: masterOutcome.positionId, fillPrice: masterOutcome.fillPrice?.toString() ?? null } },
      ...(masterOutcome.positionId ? [{ userId, accountId: master.id, type: 'position.opened', payload: { role: 'master', tradeId, positionId: masterOutcome.positionId, symbol: input.symbol, side: input.side, volume: (masterOutcome.filledVolume ?? input.volume).toString(), price: masterOutcome.fillPrice?.toString() ?? null } }] : []),
      ...plan.flatMap((p, i) => (p.kind === 'skip' ? [{ userId, accountId: p.slave.id, type: 'copy.skipped', payload: { tradeId, intentId: rows[i]!.id, reason: p.reason, detail: p.detail, symbol: p.symbol } }] : [])),
    ];
    const t1 = performance.now();
    await this.store.trades.recordIntents(tradeId, {
      status: 'accepted', copiedTo: sends, masterPositionId: masterOutcome.positionId, masterOrderId: masterOutcome.brokerOrderId,
      fillPrice: masterOutcome.fillPrice?.toString() ?? null, masterOutcome: outcomeFields(masterOutcome).outcome,
    }, rows, events);
    const recordMs = performance.now() - t1;

    const done = Promise.all(plan.map((p, i) => {
      if (p.kind !== 'send') return Promise.resolve();
      return this.dispatcher.track(this.dispatchOne(master, tradeId, rows[i]!.id, p, adapters.get(p.slave.id)!, masterOutcome, { plan: planMs, record: recordMs }));
    })).then(() => undefined);
    return { dispatched: sends, done };
  }

  private async dispatchOne(master: Account, tradeId: string, intentId: string, p: PlannedCopy & { kind: 'send' }, adapter: BrokerAdapter, masterOutcome: OrderOutcome & { kind: 'confirmed' }, latency: Record<string, number>) {
    const t0 = performance.now();
    await this.store.trades.updateIntent(intentId, { state: 'sent', attempts: 1 });
    const tSend = performance.now();
    let outcome: OrderOutcome;
    try {
      outcome = await this.dispatcher.place(p.slave.id, adapter, { symbol: p.symbol, side: p.side, type: p.type, volume: p.volume, price: p.price, stopLoss: p.stopLoss, takeProfit: p.takeProfit, tag: p.tag });
    } catch (err) {
      // An adapter that throws on a write broke its contract; we cannot know if it applied, so: unresolved.
      outcome = { kind: 'unresolved', code: 'adapter_error', message: err instanceof Error ? err.message : String(err) };
    }
    const ackMs = performance.now() - tSend;
    outcome = await this.settle(adapter, p.tag, outcome);
    const fields = outcomeFields(outcome);
    let slippage: string | null = null;
    if (outcome.kind === 'confirmed' && outcome.fillPrice && masterOutcome.fillPrice && p.type === 'market') {
      // Positive = worse for the Slave than the Master's fill, whatever the side.
      const diff = outcome.fillPrice.minus(masterOutcome.fillPrice);
      slippage = (p.side === 'buy' ? diff : diff.neg()).toString();
    }
    const userId = master.userId;
    const base = { tradeId, intentId, symbol: p.symbol, side: p.side, volume: p.volume.toString() };
    const events: NewEvent[] = [{
      userId, accountId: p.slave.id, type: `copy.${outcome.kind}`,
      payload: outcome.kind === 'confirmed'
        ? { ...base, positionId: outcome.positionId, orderId: outcome.brokerOrderId, fillPrice: outcome.fillPrice?.toString() ?? null, filledVolume: outcome.filledVolume?.toString() ?? null, slippage }
        : { ...base, code: outcome.code, message: outcome.message },
    }];
    if (outcome.kind === 'confirmed' && outcome.positionId) {
      events.push({ userId, accountId: p.slave.id, type: 'position.opened', payload: { role: 'slave', intentId, positionId: outcome.positionId, symbol: p.symbol, side: p.side, volume: (outcome.filledVolume ?? p.volume).toString(), price: outcome.fillPrice?.toString() ?? null, masterPositionId: masterOutcome.positionId } });
    }
    await this.store.trades.updateIntent(intentId, { ...fields, slippage, latency: { ...latency, send: tSend - t0, ack: ackMs } }, events);
    if (outcome.kind === 'confirmed' && outcome.positionId && masterOutcome.positionId) {
      await this.store.trades.insertLink({ id: newId('act'), masterAccountId: master.id, masterPositionId: masterOutcome.positionId, slaveAccountId: p.slave.id, slavePositionId: outcome.positionId, intentId });
    }
  }
}
