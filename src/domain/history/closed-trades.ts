import { Decimal } from '../decimal.js';
import type { Deal, InstrumentSpec, Side } from '../types.js';

/**
 * Closed trades from a broker's deal history: the deals of one position, from its first opening deal until it is
 * flat again, are one trade (a netting account reusing a position id, or a reversal, starts the next one).
 */

/** Where a trade's realized profit comes from: the broker's own history, our arithmetic, or neither. */
export type ProfitSource = 'broker' | 'computed' | 'unavailable';

export interface ClosedTrade {
  /** The broker's position id; `:2`, `:3`... for the later trades of a reused position id. */
  id: string;
  positionId: string;
  symbol: string;
  /** The position's side (a sell deal closes a buy position). */
  side: Side;
  /** Volume closed, in lots. */
  volume: Decimal;
  /** Volume-weighted over the opening deals; null when they are older than the deals read. */
  openPrice: Decimal | null;
  closePrice: Decimal | null;
  openTime: string | null;
  closeTime: string;
  /** Realized profit in the account currency, before swap and commission; null when it cannot be known. */
  profit: Decimal | null;
  profitSource: ProfitSource;
  /** Sums of what the broker booked on the trade's deals; null when it books none on any of them. */
  swap: Decimal | null;
  commission: Decimal | null;
  /** profit + swap + commission; null when profit is. */
  netProfit: Decimal | null;
  /** False while part of the position is still open (a partial close realized this much so far). */
  fullyClosed: boolean;
  tag: string | null;
}

interface Segment {
  positionId: string;
  n: number;
  ins: Deal[];
  outs: Deal[];
  held: Decimal;
}

/** The instrument spec of a symbol (contract size for computed profit), or null when unknown. */
export type SpecOf = (symbol: string) => InstrumentSpec | null | undefined;

/** The deals (oldest first, as listDeals gives them) as closed trades, oldest close first. */
export function closedTrades(deals: readonly Deal[], specOf: SpecOf): ClosedTrade[] {
  const current = new Map<string, Segment>();
  const count = new Map<string, number>();
  const done: Segment[] = [];
  const start = (positionId: string): Segment => {
    const n = (count.get(positionId) ?? 0) + 1;
    count.set(positionId, n);
    const s: Segment = { positionId, n, ins: [], outs: [], held: new Decimal(0) };
    current.set(positionId, s);
    return s;
  };
  for (const d of deals) {
    let s = current.get(d.positionId) ?? start(d.positionId);
    if (d.entry === 'in') {
      if (s.outs.length > 0 && s.held.lte(0)) s = start(d.positionId);
      s.ins.push(d);
      s.held = s.held.plus(d.volume);
    } else {
      s.outs.push(d);
      s.held = s.held.minus(d.volume);
      if (s.ins.length > 0 && s.held.lte(0)) {
        done.push(s);
        current.delete(d.positionId);
      }
    }
  }
  for (const s of current.values()) if (s.outs.length > 0) done.push(s);
  return done
    .map((s) => toTrade(s, specOf))
    .sort((a, b) => Date.parse(a.closeTime) - Date.parse(b.closeTime) || a.id.localeCompare(b.id));
}

function toTrade(s: Segment, specOf: SpecOf): ClosedTrade {
  const first = s.ins[0] ?? s.outs[0]!;
  const side: Side = s.ins[0] ? s.ins[0].side : s.outs[0]!.side === 'buy' ? 'sell' : 'buy';
  const volume = sum(s.outs.map((d) => d.volume))!;
  const openPrice = vwap(s.ins);
  const { profit, profitSource } = realized(s.outs, side, openPrice, specOf(first.symbol));
  const all = [...s.ins, ...s.outs];
  const swap = sum(all.map((d) => d.swap ?? null));
  const commission = sum(all.map((d) => d.commission ?? null));
  const last = s.outs[s.outs.length - 1]!;
  return {
    id: s.n === 1 ? s.positionId : `${s.positionId}:${s.n}`,
    positionId: s.positionId,
    symbol: first.symbol,
    side,
    volume,
    openPrice,
    closePrice: vwap(s.outs),
    openTime: s.ins[0]?.time ?? null,
    closeTime: last.time,
    profit,
    profitSource,
    swap,
    commission,
    netProfit: profit === null ? null : profit.plus(swap ?? 0).plus(commission ?? 0),
    fullyClosed: s.ins.length > 0 && s.held.lte(0),
    tag: s.ins.find((d) => d.tag)?.tag ?? s.outs.find((d) => d.tag)?.tag ?? null,
  };
}

/**
 * The broker's booked profit when every closing deal carries one; otherwise (close - open) x volume x contract
 * size, signed by the side, to the cent: that is the account currency when the symbol is quoted in it.
 */
function realized(
  outs: readonly Deal[],
  side: Side,
  openPrice: Decimal | null,
  spec: InstrumentSpec | null | undefined,
): { profit: Decimal | null; profitSource: ProfitSource } {
  if (outs.every((d) => d.profit !== null && d.profit !== undefined))
    return { profit: sum(outs.map((d) => d.profit!))!, profitSource: 'broker' };
  if (!openPrice || !spec || outs.some((d) => d.price === null)) return { profit: null, profitSource: 'unavailable' };
  const sign = side === 'buy' ? 1 : -1;
  const raw = outs.reduce(
    (acc, d) => acc.plus(d.price!.minus(openPrice).mul(d.volume).mul(spec.contractSize).mul(sign)),
    new Decimal(0),
  );
  return { profit: raw.toDecimalPlaces(2, Decimal.ROUND_HALF_UP), profitSource: 'computed' };
}

/** Volume-weighted price of deals that name one, or null when none does. */
function vwap(deals: readonly Deal[]): Decimal | null {
  const priced = deals.filter((d) => d.price !== null);
  const volume = sum(priced.map((d) => d.volume));
  if (!volume || volume.isZero()) return null;
  // Eight places: more than any broker quotes, and a third of a lot does not print 20 digits.
  return priced
    .reduce((acc, d) => acc.plus(d.price!.mul(d.volume)), new Decimal(0))
    .div(volume)
    .toDecimalPlaces(8, Decimal.ROUND_HALF_UP);
}

/** Sum of the known values, null when none is known. */
export function sum(values: readonly (Decimal | null)[]): Decimal | null {
  let total: Decimal | null = null;
  for (const v of values) if (v !== null) total = (total ?? new Decimal(0)).plus(v);
  return total;
}
