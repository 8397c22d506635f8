import type { Decimal } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import type { OrderType, Side } from '../domain/types.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { NewMasterItem } from '../domain/ledger-types.js';
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

/**
 * The fan-out of an order-route trade once its Master fill is known: the copy engine's, shared with the
 * watcher. Called by the route itself, and by the settle loop for a trade whose route never finished (the
 * process stopped between the Master's fill and its record): the same trade id, the same deterministic intent
 * tags, and the store records the intents only while the trade is still pending or unresolved, so the fan-out
 * happens at most once whoever gets there.
 */
export async function fanOutApiOrder(
  engine: CopyEngine,
  master: Account,
  tradeId: string,
  tag: string,
  input: OrderInput,
  masterOutcome: OrderOutcome & { kind: 'confirmed' },
  receivedAt: number,
  requestId: string | null,
): Promise<{ recorded: boolean; dispatched: number; done: Promise<void> }> {
  const positionId = masterOutcome.positionId;
  const action: MasterAction = {
    id: null,
    kind: input.type === 'market' ? 'open' : 'order_placed',
    masterAccountId: master.id,
    positionId: input.type === 'market' ? positionId : null,
    orderId: masterOutcome.brokerOrderId,
    symbol: input.symbol,
    side: input.side,
    type: input.type,
    volume: input.volume,
    prevVolume: null,
    price: input.type === 'market' ? masterOutcome.fillPrice : input.price,
    stopLoss: input.stopLoss,
    takeProfit: input.takeProfit,
    at: receivedAt,
    item: masterItem(master.id, tradeId, tag, input, masterOutcome),
  };
  const userId = master.userId;
  const res = await engine.copy(master, action, {
    tradeId,
    source: 'api',
    masterOutcome,
    requestId,
    events: (copiedTo) => [
      {
        userId,
        accountId: master.id,
        type: 'order.accepted',
        payload: {
          tradeId,
          symbol: input.symbol,
          side: input.side,
          volume: input.volume.toString(),
          copiedTo,
          positionId,
          fillPrice: masterOutcome.fillPrice?.toString() ?? null,
        },
      },
      ...(positionId
        ? [
            {
              userId,
              accountId: master.id,
              type: 'position.opened',
              payload: {
                role: 'master',
                tradeId,
                positionId,
                symbol: input.symbol,
                side: input.side,
                volume: (masterOutcome.filledVolume ?? input.volume).toString(),
                price: masterOutcome.fillPrice?.toString() ?? null,
              },
            },
          ]
        : []),
    ],
  });
  return { recorded: res.recorded, dispatched: res.dispatched, done: res.done };
}

/**
 * The watcher's view of the Master item the order made, recorded with the intents: a Master that closes it
 * while the watcher has not seen it yet (or while the service is down) is still known, so its close is copied.
 */
function masterItem(
  accountId: string,
  tradeId: string,
  tag: string,
  input: OrderInput,
  o: OrderOutcome & { kind: 'confirmed' },
): NewMasterItem {
  const pending = input.type !== 'market';
  return {
    accountId,
    kind: pending ? 'order' : 'position',
    itemId: (pending ? o.brokerOrderId : o.positionId) ?? '',
    symbol: input.symbol,
    side: input.side,
    orderType: input.type,
    volume: pending ? input.volume : (o.filledVolume ?? input.volume),
    price: pending ? input.price : o.fillPrice,
    stopLoss: input.stopLoss,
    takeProfit: input.takeProfit,
    tag,
    open: true,
    seq: 0,
    originTradeId: tradeId,
    openedAt: o.brokerTime ? new Date(o.brokerTime) : null,
  };
}
