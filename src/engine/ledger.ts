import type { Account } from '../domain/account.js';
import { correlationTag } from '../domain/correlation.js';
import { decText, type Decimal } from '../domain/decimal.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { NewTrade, Trade } from '../domain/ledger-types.js';
import type { IntentUpdate } from '../store/repos/trades.js';
import type { MasterAction } from './actions.js';

/** What an outcome needs of its trade: how it was placed at the Master and when. */
export type TradeLike = Pick<Trade, 'orderType' | 'masterPositionId' | 'masterOrderId' | 'fillPrice' | 'side'> & {
  actionAt: Date;
};

/** The ledger's view of an outcome: state, ids, fill and the broker's answer as stored JSON. */
export function outcomeUpdate(o: OrderOutcome, slippage: Decimal | null, tag: string): IntentUpdate {
  if (o.kind === 'confirmed')
    return {
      state: 'confirmed',
      brokerOrderId: o.brokerOrderId,
      brokerPositionId: o.positionId,
      filledVolume: o.filledVolume ?? null,
      fillPrice: o.fillPrice ?? null,
      outcome: outcomeJson(o),
      slippage,
      tag,
    };
  return { state: o.kind, outcome: outcomeJson(o), slippage, tag };
}

/** The broker's answer as stored JSON. */
export function outcomeJson(o: OrderOutcome): Record<string, unknown> {
  return o.kind === 'confirmed'
    ? { kind: o.kind, brokerOrderId: o.brokerOrderId, positionId: o.positionId, brokerTime: o.brokerTime }
    : { kind: o.kind, code: o.code, message: o.message };
}

/**
 * The trade row of a master action seen by the watcher or healed by the reconciler. It stays `recorded` until
 * its sends are handed out: the events are written with the move to accepted (see actionEvents).
 */
export function actionTrade(
  master: Account,
  action: MasterAction,
  tradeId: string,
  opts: { source?: 'api' | 'watcher' | 'reconciler'; requestId?: string | null },
  sends: number,
  refPrice: Decimal | null,
): NewTrade & { id: string } {
  return {
    id: tradeId,
    userId: master.userId,
    masterAccountId: master.id,
    groupId: master.groupId,
    source: opts.source ?? 'watcher',
    action: action.kind,
    symbol: action.symbol,
    side: action.side,
    orderType: action.type,
    volume: action.volume,
    price: action.type === 'market' ? null : action.price,
    stopLoss: action.stopLoss,
    takeProfit: action.takeProfit,
    tag: correlationTag({ tradeId, accountId: master.id, action: action.kind }),
    status: sends > 0 ? 'recorded' : 'accepted',
    masterOutcome: {
      kind: 'observed',
      at: new Date(action.at).toISOString(),
      volumeAfter: decText(action.item.volume),
    },
    masterPositionId: action.positionId,
    masterOrderId: action.orderId,
    fillPrice: refPrice,
    copiedTo: sends,
    actionId: action.id,
    actionAt: new Date(action.at),
    requestId: opts.requestId ?? null,
    ...(action.magic != null ? { masterMagic: action.magic } : {}),
    ...(action.comment != null ? { masterComment: action.comment } : {}),
  };
}

/** How an order-route trade changes when its fan-out is recorded (it moves from pending/unresolved to accepted). */
export function fanoutTradeSet(
  action: MasterAction,
  sends: number,
  refPrice: Decimal | null,
  masterOutcome: (OrderOutcome & { kind: 'confirmed' }) | undefined,
): Partial<NewTrade> {
  return {
    status: 'accepted',
    copiedTo: sends,
    masterPositionId: masterOutcome?.positionId ?? action.positionId,
    masterOrderId: masterOutcome?.brokerOrderId ?? action.orderId,
    fillPrice: refPrice,
    ...(masterOutcome ? { masterOutcome: outcomeJson(masterOutcome) } : {}),
    actionAt: new Date(action.at),
  };
}
