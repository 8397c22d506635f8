import { createHash } from 'node:crypto';
import type { Decimal } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import type { SimBrokerApi, SimDeal, SimInstrument } from '../contract.js';
import { toRow } from './columns.js';
import { SESSION_ID, SESSION_STATUS_ID } from './sessions.js';

/** How simulator objects look on the TradeLocker wire: positional string rows, ids as strings. */

export const tradeRouteId = (inst: SimInstrument) => inst.numericId * 100 + 1;
export const infoRouteId = (inst: SimInstrument) => inst.numericId * 100 + 2;
/** TradeLocker distinguishes the symbol id from tradableInstrumentId; keep them different so a mix-up shows. */
export const symbolIdOf = (inst: SimInstrument) => inst.numericId + 1000;

const s = (v: Decimal | null | undefined): string | null => (v === null || v === undefined ? null : v.toFixed());
const ms = (iso: string) => String(Date.parse(iso));

/**
 * TradeLocker exposes SL and TP as separate stop/limit orders whose ids sit in the position row. The
 * simulator keeps them as fields of the position, so their ids are derived: stable, 64-bit, never colliding
 * with the simulator's own ids in practice.
 */
export function protectiveOrderId(positionId: string, kind: 'sl' | 'tp'): string {
  const h = createHash('sha256').update(`${positionId}:${kind}`).digest();
  return ((h.readBigUInt64BE(0) & 0x3fffffffffffffffn) | 0x4000000000000000n).toString();
}

export function findProtective(
  broker: SimBrokerApi,
  simAccountId: string,
  orderId: string,
): { position: Position; kind: 'sl' | 'tp' } | null {
  for (const p of broker.positions(simAccountId)) {
    if (p.stopLoss && protectiveOrderId(p.id, 'sl') === orderId) return { position: p, kind: 'sl' };
    if (p.takeProfit && protectiveOrderId(p.id, 'tp') === orderId) return { position: p, kind: 'tp' };
  }
  return null;
}

export function positionRow(columns: string[], p: Position, inst: SimInstrument) {
  return toRow(columns, {
    id: p.id,
    tradableInstrumentId: String(inst.numericId),
    routeId: String(tradeRouteId(inst)),
    side: p.side,
    qty: s(p.volume),
    avgPrice: s(p.openPrice),
    stopLossId: p.stopLoss ? protectiveOrderId(p.id, 'sl') : null,
    takeProfitId: p.takeProfit ? protectiveOrderId(p.id, 'tp') : null,
    openDate: ms(p.openedAt),
    unrealizedPl: s(p.profit) ?? '0',
    strategyId: p.tag ?? '',
  });
}

export const WIRE_STATUS: Record<Order['status'], string> = {
  pending: 'New',
  filled: 'Filled',
  cancelled: 'Cancelled',
  rejected: 'Rejected',
};

export function orderRow(columns: string[], o: Order, inst: SimInstrument, fillPrice: Decimal | null) {
  return toRow(columns, {
    id: o.id,
    tradableInstrumentId: String(inst.numericId),
    routeId: String(tradeRouteId(inst)),
    qty: s(o.volume),
    side: o.side,
    type: o.type,
    status: WIRE_STATUS[o.status],
    filledQty: s(o.filledVolume),
    avgPrice: s(fillPrice),
    price: o.type === 'stop' ? '0' : (s(o.price) ?? s(fillPrice) ?? '0'),
    stopPrice: o.type === 'stop' ? s(o.price) : '0',
    validity: o.type === 'market' ? 'IOC' : 'GTC',
    expireDate: null,
    createdDate: ms(o.createdAt),
    lastModified: ms(o.updatedAt),
    isOpen: o.status === 'pending' ? 'true' : 'false',
    positionId: o.positionId,
    stopLoss: s(o.stopLoss),
    stopLossType: o.stopLoss ? 'absolute' : null,
    takeProfit: s(o.takeProfit),
    takeProfitType: o.takeProfit ? 'absolute' : null,
    strategyId: o.tag ?? '',
  });
}

export function protectiveRows(columns: string[], p: Position, inst: SimInstrument) {
  const rows = [];
  const base = {
    tradableInstrumentId: String(inst.numericId),
    routeId: String(tradeRouteId(inst)),
    qty: s(p.volume),
    side: p.side === 'buy' ? 'sell' : 'buy',
    status: 'New',
    filledQty: '0',
    avgPrice: '0',
    validity: 'GTC',
    expireDate: null,
    createdDate: ms(p.openedAt),
    lastModified: ms(p.openedAt),
    isOpen: 'true',
    positionId: p.id,
    stopLoss: null,
    stopLossType: null,
    takeProfit: null,
    takeProfitType: null,
    strategyId: p.tag ?? '',
  };
  if (p.stopLoss)
    rows.push(
      toRow(columns, {
        ...base,
        id: protectiveOrderId(p.id, 'sl'),
        type: 'stop',
        price: '0',
        stopPrice: s(p.stopLoss),
      }),
    );
  if (p.takeProfit)
    rows.push(
      toRow(columns, {
        ...base,
        id: protectiveOrderId(p.id, 'tp'),
        type: 'limit',
        price: s(p.takeProfit),
        stopPrice: '0',
      }),
    );
  return rows;
}

export function fillRow(columns: string[], d: SimDeal, inst: SimInstrument) {
  return toRow(columns, {
    id: d.id,
    price: s(d.price),
    side: d.side,
    createdDate: ms(d.time),
    qty: s(d.volume),
    orderId: d.orderId,
    positionId: d.positionId,
    tradableInstrumentId: String(inst.numericId),
  });
}

/** Volume-weighted fill price per order, since simulator orders do not carry one. */
export function fillPrices(deals: SimDeal[]): Map<string, Decimal> {
  const acc = new Map<string, { v: Decimal; pv: Decimal }>();
  for (const d of deals) {
    const cur = acc.get(d.orderId);
    if (cur) acc.set(d.orderId, { v: cur.v.add(d.volume), pv: cur.pv.add(d.volume.mul(d.price)) });
    else acc.set(d.orderId, { v: d.volume, pv: d.volume.mul(d.price) });
  }
  const out = new Map<string, Decimal>();
  for (const [id, { v, pv }] of acc) if (!v.isZero()) out.set(id, pv.div(v));
  return out;
}

export function instrumentListItem(inst: SimInstrument) {
  return {
    tradableInstrumentId: inst.numericId,
    id: symbolIdOf(inst),
    name: inst.symbol,
    description: inst.description,
    type: instrumentType(inst.symbol),
    tradingExchange: 'SIM',
    marketDataExchange: 'SIM',
    country: null,
    logoUrl: null,
    localizedName: inst.symbol,
    routes: [
      { id: infoRouteId(inst), type: 'INFO' },
      { id: tradeRouteId(inst), type: 'TRADE' },
    ],
    barSource: 'BID',
    hasIntraday: true,
    hasDaily: true,
  };
}

export function instrumentDetails(inst: SimInstrument) {
  return {
    name: inst.symbol,
    description: inst.description,
    lotSize: inst.contractSize.toNumber(),
    lotStep: inst.volumeStep.toNumber(),
    minLot: inst.minVolume.toNumber(),
    maxLot: inst.maxVolume.toNumber(),
    tickSize: [{ leftRangeLimit: 0, tickSize: inst.tickSize.toNumber() }],
    tickCost: [{ leftRangeLimit: 0, tickCost: inst.tickSize.mul(inst.contractSize).toNumber() }],
    quotingCurrency: /^[A-Z]{6}$/.test(inst.symbol) ? inst.symbol.slice(3) : 'USD',
    baseCurrency: /^[A-Z]{6}$/.test(inst.symbol) ? inst.symbol.slice(0, 3) : null,
    leverage: null,
    marketDataExchange: 'SIM',
    tradingExchange: 'SIM',
    symbolStatus: 'FULLY_OPEN',
    type: instrumentType(inst.symbol),
    barSource: 'BID',
    tradeSessionId: SESSION_ID,
    tradeSessionStatusId: SESSION_STATUS_ID,
    settlementSystem: 'Immediate',
    hasDaily: true,
    hasIntraday: true,
    localizedName: inst.symbol,
  };
}

function instrumentType(symbol: string): string {
  if (symbol.startsWith('XA')) return 'FOREX';
  if (/^[A-Z]{6}$/.test(symbol)) return 'FOREX';
  return 'INDICES';
}
