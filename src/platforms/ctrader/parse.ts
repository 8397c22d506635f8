import { type Decimal, dec } from '../../domain/decimal.js';
import type {
  Deal,
  InstrumentSpec,
  Order,
  OrderStatus as DomainOrderStatus,
  OrderType as DomainOrderType,
  Position,
} from '../../domain/types.js';
import type { BrokerEvent } from '../adapter.js';
import {
  DealStatus,
  ExecutionType,
  OrderStatus,
  OrderType,
  PositionStatus,
  TradeSide,
} from '../../protocols/ctrader/enums.js';
import type {
  DealMsg,
  I64,
  ExecutionEventMsg,
  LightSymbolMsg,
  OrderMsg,
  PositionMsg,
  SymbolMsg,
} from '../../protocols/ctrader/messages.js';
import { fromMoney, msToIso, priceFromDouble, wireVolumeToLots } from '../../protocols/ctrader/units.js';

/** Pure Open API message -> domain parsers. Volumes come back in lots through the symbol's lotSize. */

export interface SymbolInfo {
  symbolId: string;
  name: string;
  digits: number;
  /** Units per lot in cents of units, as on the wire. */
  lotSize: Decimal;
  contractSize: Decimal;
  minVolume: Decimal;
  maxVolume: Decimal;
  volumeStep: Decimal;
  tickSize: Decimal;
}

export type SymbolLookup = (symbolId: string) => SymbolInfo | undefined;

export function parseSymbol(light: LightSymbolMsg, full: SymbolMsg): SymbolInfo {
  // lotSize is optional on the wire; 100,000 units (FX standard lot) is the documented example.
  const lotSize = dec(full.lotSize ?? '10000000');
  const lots = (v: string | undefined, fallback: string) => wireVolumeToLots(v ?? fallback, lotSize);
  return {
    symbolId: String(full.symbolId),
    name: light.symbolName ?? String(full.symbolId),
    digits: full.digits,
    lotSize,
    contractSize: lotSize.div(100),
    minVolume: lots(full.minVolume, lotSize.div(100).toFixed(0)),
    maxVolume: lots(full.maxVolume, lotSize.mul(100).toFixed(0)),
    volumeStep: lots(full.stepVolume, full.minVolume ?? lotSize.div(100).toFixed(0)),
    tickSize: dec(10).pow(-full.digits),
  };
}

export function toInstrumentSpec(s: SymbolInfo): InstrumentSpec {
  return {
    symbol: s.name,
    volumeStep: s.volumeStep,
    minVolume: s.minVolume,
    maxVolume: s.maxVolume,
    contractSize: s.contractSize,
    tickSize: s.tickSize,
  };
}

const sideOf = (tradeSide: number) => (tradeSide === TradeSide.SELL ? ('sell' as const) : ('buy' as const));
const px = (v: number | undefined, s: SymbolInfo): Decimal | null =>
  v === undefined || v === 0 ? null : priceFromDouble(v, s.digits);
const nowIso = () => new Date().toISOString();

export function parsePosition(
  p: PositionMsg,
  s: SymbolInfo,
  profit: Decimal | null = null,
  currentPrice: Decimal | null = null,
): Position {
  return {
    id: String(p.positionId),
    symbol: s.name,
    side: sideOf(p.tradeData.tradeSide),
    volume: wireVolumeToLots(p.tradeData.volume, s.lotSize),
    openPrice: px(p.price, s) ?? dec(0),
    currentPrice,
    stopLoss: px(p.stopLoss, s),
    takeProfit: px(p.takeProfit, s),
    profit,
    openedAt: msToIso(p.tradeData.openTimestamp) ?? nowIso(),
    tag: p.tradeData.label || null,
  };
}

const ORDER_TYPES: Record<number, DomainOrderType> = {
  [OrderType.MARKET]: 'market',
  [OrderType.MARKET_RANGE]: 'market',
  [OrderType.LIMIT]: 'limit',
  [OrderType.STOP]: 'stop',
  [OrderType.STOP_LIMIT]: 'stop',
};
const ORDER_STATUSES: Record<number, DomainOrderStatus> = {
  [OrderStatus.ACCEPTED]: 'pending',
  [OrderStatus.FILLED]: 'filled',
  [OrderStatus.REJECTED]: 'rejected',
  [OrderStatus.EXPIRED]: 'cancelled',
  [OrderStatus.CANCELLED]: 'cancelled',
};

/** Null for protection (SL/TP) orders: the port shows those as a position's stopLoss/takeProfit. */
export function parseOrder(o: OrderMsg, s: SymbolInfo): Order | null {
  const type = ORDER_TYPES[o.orderType];
  if (!type) return null;
  const createdAt = msToIso(o.tradeData.openTimestamp) ?? nowIso();
  return {
    id: String(o.orderId),
    symbol: s.name,
    side: sideOf(o.tradeData.tradeSide),
    type,
    volume: wireVolumeToLots(o.tradeData.volume, s.lotSize),
    filledVolume: wireVolumeToLots(o.executedVolume ?? '0', s.lotSize),
    price: type === 'limit' ? px(o.limitPrice, s) : type === 'stop' ? px(o.stopPrice, s) : null,
    stopLoss: px(o.stopLoss, s),
    takeProfit: px(o.takeProfit, s),
    status: ORDER_STATUSES[o.orderStatus] ?? 'pending',
    positionId: o.positionId ? String(o.positionId) : null,
    createdAt,
    updatedAt: msToIso(o.utcLastUpdateTimestamp) ?? createdAt,
    tag: o.clientOrderId || o.tradeData.label || null,
  };
}

/** Only executed deals count: REJECTED, INTERNALLY_REJECTED, ERROR and MISSED deals moved nothing. */
export const isExecutedDeal = (d: DealMsg): boolean =>
  d.dealStatus === DealStatus.FILLED || d.dealStatus === DealStatus.PARTIALLY_FILLED;

/**
 * One deal of the deal list. The volume is what filled (`filledVolume`; `volume` is what the order asked), in lots
 * like a position's; a deal carrying `closePositionDetail` closed (part of) a position. The deal itself names no
 * tag: the caller passes the one its order (or position) carries, or null.
 */
export function parseDeal(d: DealMsg, s: SymbolInfo, tag: string | null): Deal {
  return {
    id: String(d.dealId),
    orderId: d.orderId === undefined || d.orderId === null ? null : String(d.orderId),
    positionId: String(d.positionId),
    symbol: s.name,
    side: sideOf(d.tradeSide),
    volume: wireVolumeToLots(d.filledVolume, s.lotSize),
    price: px(d.executionPrice, s),
    entry: d.closePositionDetail ? 'out' : 'in',
    time: msToIso(d.executionTimestamp) ?? nowIso(),
    tag,
    ...dealMoney(d),
  };
}

/**
 * The money of a deal, scaled by its moneyDigits: the gross profit and swap of the part it closed
 * (closePositionDetail; an opening deal realizes none), the deal's own commission (closePositionDetail.commission
 * is not added: it would count the closed part's commission twice).
 */
function dealMoney(d: DealMsg): Pick<Deal, 'profit' | 'swap' | 'commission'> {
  const c = d.closePositionDetail;
  const digits = c?.moneyDigits ?? d.moneyDigits;
  const money = (v: I64 | undefined, k: number | undefined) => (v === undefined || v === null ? null : fromMoney(v, k));
  return {
    profit: c ? money(c.grossProfit, digits) : null,
    swap: c ? money(c.swap, digits) : null,
    commission: money(d.commission, d.moneyDigits),
  };
}

const isPendingType = (o: OrderMsg | undefined) =>
  o !== undefined &&
  (o.orderType === OrderType.LIMIT || o.orderType === OrderType.STOP || o.orderType === OrderType.STOP_LIMIT);

/** Volume a fill closed, from the closing deal. */
export function closedVolume(deal: DealMsg | undefined, s: SymbolInfo): Decimal | null {
  const v = deal?.closePositionDetail?.closedVolume ?? (deal?.closePositionDetail ? deal.filledVolume : undefined);
  return v === undefined ? null : wireVolumeToLots(v, s.lotSize);
}

/**
 * An execution event as the port's broker events, the same set the simulator itself reports: market fills are
 * position events only, a pending order's fill is the position event followed by order_filled.
 */
export function parseExecutionEvent(ev: ExecutionEventMsg, symbolOf: SymbolLookup): BrokerEvent[] {
  const symId = ev.position?.tradeData.symbolId ?? ev.order?.tradeData.symbolId ?? ev.deal?.symbolId;
  const s = symId === undefined ? undefined : symbolOf(String(symId));
  if (!s) return [];
  const at =
    msToIso(ev.deal?.executionTimestamp ?? ev.order?.utcLastUpdateTimestamp ?? ev.position?.utcLastUpdateTimestamp) ??
    nowIso();
  const order = ev.order ? parseOrder(ev.order, s) : null;
  const position = ev.position ? parsePosition(ev.position, s) : null;
  const out: BrokerEvent[] = [];
  switch (ev.executionType) {
    case ExecutionType.ORDER_ACCEPTED:
      if (order && isPendingType(ev.order) && order.status === 'pending') out.push({ kind: 'order_placed', order, at });
      break;
    case ExecutionType.ORDER_REPLACED:
      if (order && isPendingType(ev.order) && order.status === 'pending')
        out.push({ kind: 'order_modified', order, at });
      else if (position) out.push({ kind: 'position_modified', position, at });
      break;
    case ExecutionType.ORDER_CANCELLED:
    case ExecutionType.ORDER_EXPIRED:
    case ExecutionType.ORDER_REJECTED:
      if (order && isPendingType(ev.order)) out.push({ kind: 'order_cancelled', order, at });
      break;
    case ExecutionType.ORDER_FILLED:
    case ExecutionType.ORDER_PARTIAL_FILL: {
      if (!position) break;
      const closing = ev.deal?.closePositionDetail !== undefined;
      if (closing) {
        const closed = closedVolume(ev.deal, s);
        const dealPrice = px(ev.deal?.executionPrice, s);
        if (ev.position!.positionStatus === PositionStatus.CLOSED) {
          const profit = ev.deal?.closePositionDetail
            ? fromMoney(ev.deal.closePositionDetail.grossProfit, ev.deal.closePositionDetail.moneyDigits)
            : null;
          out.push({
            kind: 'position_closed',
            position: { ...position, volume: closed ?? position.volume, currentPrice: dealPrice, profit },
            ...(closed ? { closedVolume: closed } : {}),
            at,
          });
        } else {
          out.push({ kind: 'position_reduced', position, ...(closed ? { closedVolume: closed } : {}), at });
        }
        break;
      }
      out.push({ kind: 'position_opened', position, at });
      if (order && isPendingType(ev.order))
        out.push({ kind: 'order_filled', order: { ...order, status: 'filled', positionId: position.id }, at });
      break;
    }
  }
  return out;
}
