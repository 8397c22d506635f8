import { type Decimal, dec } from '../../domain/decimal.js';
import type { Deal, Order, OrderStatus, Position } from '../../domain/types.js';
import type { WireDeal, WireOrder, WirePosition } from './schemas.js';

/**
 * Domain objects <-> the bridge's wire shapes. The simulated EA writes with the `to*` half, the adapter reads
 * with the `from*` half, so both sides agree on one mapping (the MQL EA writes the same shapes by hand).
 */

// toFixed(): plain notation always (toString() writes 1e-7, which the schema's decimal pattern refuses).
const s = (d: Decimal | null | undefined): string | null => (d === null || d === undefined ? null : d.toFixed());
const d = (v: string | null): Decimal | null => (v === null ? null : dec(v));
const ms = (iso: string): number => Date.parse(iso);
const iso = (t: number): string => new Date(t).toISOString();

const STATE_OF: Record<OrderStatus, WireOrder['state']> = {
  pending: 'placed',
  filled: 'filled',
  cancelled: 'canceled',
  rejected: 'rejected',
};
const STATUS_OF: Record<WireOrder['state'], OrderStatus> = {
  placed: 'pending',
  partial: 'pending',
  filled: 'filled',
  canceled: 'cancelled',
  rejected: 'rejected',
};

export function toWirePosition(p: Position): WirePosition {
  return {
    ticket: p.id,
    symbol: p.symbol,
    side: p.side,
    volume: p.volume.toFixed(),
    openPrice: p.openPrice.toFixed(),
    currentPrice: s(p.currentPrice),
    sl: s(p.stopLoss),
    tp: s(p.takeProfit),
    profit: s(p.profit),
    time: ms(p.openedAt),
    comment: p.tag,
  };
}

export function fromWirePosition(w: WirePosition): Position {
  return {
    id: w.ticket,
    symbol: w.symbol,
    side: w.side,
    volume: dec(w.volume),
    openPrice: dec(w.openPrice),
    currentPrice: d(w.currentPrice),
    stopLoss: d(w.sl),
    takeProfit: d(w.tp),
    profit: d(w.profit),
    openedAt: iso(w.time),
    tag: w.comment || null,
    // The same field: the comment our copies carry is their tag, a Master's own is what its trader or EA wrote.
    comment: w.comment || null,
  };
}

export function toWireOrder(o: Order): WireOrder {
  const done = o.status !== 'pending';
  return {
    ticket: o.id,
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    volume: o.volume.toFixed(),
    filledVolume: o.filledVolume.toFixed(),
    price: s(o.price),
    sl: s(o.stopLoss),
    tp: s(o.takeProfit),
    state: STATE_OF[o.status],
    position: o.positionId,
    timeSetup: ms(o.createdAt),
    timeDone: done ? ms(o.updatedAt) : null,
    comment: o.tag,
  };
}

export function fromWireOrder(w: WireOrder): Order {
  return {
    id: w.ticket,
    symbol: w.symbol,
    side: w.side,
    type: w.type,
    volume: dec(w.volume),
    filledVolume: dec(w.filledVolume),
    price: d(w.price),
    stopLoss: d(w.sl),
    takeProfit: d(w.tp),
    status: STATUS_OF[w.state],
    positionId: w.position,
    createdAt: iso(w.timeSetup),
    updatedAt: iso(w.timeDone ?? w.timeSetup),
    tag: w.comment || null,
    comment: w.comment || null,
  };
}

export interface DealLike {
  id: string;
  orderId: string | null;
  positionId: string;
  symbol: string;
  side: 'buy' | 'sell';
  volume: Decimal;
  price: Decimal;
  entry: 'in' | 'out';
  profit: Decimal;
  time: string;
  tag: string | null;
}

export function toWireDeal(x: DealLike): WireDeal {
  return {
    ticket: x.id,
    order: x.orderId,
    position: x.positionId,
    symbol: x.symbol,
    side: x.side,
    entry: x.entry,
    volume: x.volume.toFixed(),
    price: x.price.toFixed(),
    profit: x.profit.toFixed(),
    time: ms(x.time),
    comment: x.tag,
  };
}

/** `inout` (a netting reversal) is reported as the `out` it starts with: the rest opens under a new deal. */
export function fromWireDeal(w: WireDeal): Deal {
  return {
    id: w.ticket,
    orderId: w.order,
    positionId: w.position,
    symbol: w.symbol,
    side: w.side,
    volume: dec(w.volume),
    price: dec(w.price),
    entry: w.entry === 'in' ? 'in' : 'out',
    time: iso(w.time),
    tag: w.comment || null,
    // DEAL_PROFIT as the terminal booked it (account currency): the history takes it over a computed amount.
    profit: d(w.profit),
  };
}
