import { Decimal, isMultipleOf } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { correlationTag } from '../domain/correlation.js';
import { AppError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { OrderType, Side } from '../domain/types.js';
import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { MasterAction } from './actions.js';
import type { CopyEngine } from './copy-engine.js';

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
    private readonly engine: CopyEngine,
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

    const copies = await this.fanOut(master, tradeId, input, outcome, receivedAt, requestId);
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
    const order = found?.order;
    if (!order) return outcome;
    // Finding the order proves it arrived, not that it filled: only a fill (or a resting pending order) is a
    // Master trade to copy. A market order the broker cancelled or rejected after the timeout copies nothing.
    if (order.status === 'filled' || (order.status === 'pending' && order.type !== 'market')) {
      return { kind: 'confirmed', brokerOrderId: order.id, positionId: order.positionId, filledVolume: order.filledVolume, fillPrice: order.price, brokerTime: order.createdAt };
    }
    if (order.status === 'cancelled' || order.status === 'rejected') {
      return { kind: 'rejected', code: `order_${order.status}`, message: `the broker ${order.status} the order after the timeout` };
    }
    return outcome;
  }

  /** The fan-out is the copy engine's, shared with the watcher: one intent per Slave, recorded, then dispatched. */
  private async fanOut(master: Account, tradeId: string, input: OrderInput, masterOutcome: OrderOutcome & { kind: 'confirmed' }, receivedAt: number, requestId: string | null) {
    const positionId = masterOutcome.positionId;
    const action: MasterAction = {
      id: null, kind: input.type === 'market' ? 'open' : 'order_placed', masterAccountId: master.id, positionId: input.type === 'market' ? positionId : null,
      orderId: masterOutcome.brokerOrderId, symbol: input.symbol, side: input.side, type: input.type, volume: input.volume, prevVolume: null,
      price: input.type === 'market' ? masterOutcome.fillPrice : input.price, stopLoss: input.stopLoss, takeProfit: input.takeProfit, at: receivedAt,
      item: { accountId: master.id, kind: 'position', itemId: positionId ?? '', symbol: input.symbol, side: input.side, orderType: input.type, volume: input.volume.toString() },
    };
    const userId = master.userId;
    const res = await this.engine.copy(master, action, {
      tradeId, source: 'api', masterOutcome, requestId,
      events: (copiedTo) => [
        { userId, accountId: master.id, type: 'order.accepted', payload: { tradeId, symbol: input.symbol, side: input.side, volume: input.volume.toString(), copiedTo, positionId, fillPrice: masterOutcome.fillPrice?.toString() ?? null } },
        ...(positionId ? [{ userId, accountId: master.id, type: 'position.opened', payload: { role: 'master', tradeId, positionId, symbol: input.symbol, side: input.side, volume: (masterOutcome.filledVolume ?? input.volume).toString(), price: masterOutcome.fillPrice?.toString() ?? null } }] : []),
      ],
    });
    return { dispatched: res.dispatched, done: res.done };
  }
}
