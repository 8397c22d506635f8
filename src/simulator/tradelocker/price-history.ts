import type { Quote } from '../contract.js';

/**
 * The simulated market keeps only its current quote, so the TradeLocker front end records what it sees
 * (a sample per second plus one on every market-data request) into one-minute bars, from which /trade/history
 * and /trade/dailyBar are served. Tick volume `v` counts distinct price updates seen, as FX feeds do.
 */

export type BarSide = 'BID' | 'ASK' | 'TRADE';

interface Ohlc {
  o: number;
  h: number;
  l: number;
  c: number;
}

interface MinuteBar {
  t: number;
  bid: Ohlc;
  ask: Ohlc;
  v: number;
}

export interface Bar extends Ohlc {
  t: number;
  v: number;
}

const MINUTE = 60_000;
/** One week of minutes per symbol: enough for any test or demo session, bounded for a long-running server. */
const KEEP_MINUTES = 7 * 24 * 60;

/** Resolution names of /trade/history (fact sheet §9) and their fixed lengths; months are calendar months. */
const FIXED: Record<string, number> = {
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1H': 60 * MINUTE,
  '4H': 240 * MINUTE,
  '1D': 1440 * MINUTE,
  '1W': 7 * 1440 * MINUTE,
};
export const RESOLUTIONS = [...Object.keys(FIXED), '1M'];

/** Start of the bucket holding `t`: weeks start on Monday 00:00 UTC, months on the 1st. */
export function bucketStart(resolution: string, t: number): number {
  if (resolution === '1M') {
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  const len = FIXED[resolution];
  if (len === undefined) throw new Error(`unknown resolution ${resolution}`);
  // 1970-01-01 was a Thursday; shift so weekly buckets start on Monday.
  const shift = resolution === '1W' ? 4 * 1440 * MINUTE : 0;
  return Math.floor((t - shift) / len) * len + shift;
}

/** Upper bound of the number of buckets in [from, to], for the QUOTES_HISTORY_BARS limit. */
export function bucketCount(resolution: string, from: number, to: number): number {
  const len = FIXED[resolution] ?? 28 * 1440 * MINUTE;
  return Math.floor((to - from) / len) + 1;
}

const merge = (a: Ohlc, price: number): Ohlc => ({
  o: a.o,
  h: Math.max(a.h, price),
  l: Math.min(a.l, price),
  c: price,
});
const point = (price: number): Ohlc => ({ o: price, h: price, l: price, c: price });

export class PriceHistory {
  private readonly bars = new Map<string, MinuteBar[]>();
  private readonly last = new Map<string, string>();

  record(q: Quote): void {
    const t = Date.parse(q.time);
    const bid = q.bid.toNumber();
    const ask = q.ask.toNumber();
    const key = `${t}|${bid}|${ask}`;
    if (!Number.isFinite(t) || this.last.get(q.symbol) === key) return;
    this.last.set(q.symbol, key);
    const list = this.bars.get(q.symbol) ?? [];
    this.bars.set(q.symbol, list);
    const start = bucketStart('1m', t);
    const cur = list.at(-1);
    if (cur && cur.t === start) {
      cur.bid = merge(cur.bid, bid);
      cur.ask = merge(cur.ask, ask);
      cur.v += 1;
      return;
    }
    list.push({ t: start, bid: point(bid), ask: point(ask), v: 1 });
    if (list.length > KEEP_MINUTES) list.splice(0, list.length - KEEP_MINUTES);
  }

  /** Bars whose bucket overlaps [from, to], oldest first. TRADE bars use the mid: FX has no last-trade price. */
  series(symbol: string, resolution: string, from: number, to: number, side: BarSide = 'BID'): Bar[] {
    const out: Bar[] = [];
    for (const m of this.bars.get(symbol) ?? []) {
      if (m.t + MINUTE <= from || m.t > to) continue;
      const px = pick(m, side);
      const start = bucketStart(resolution, m.t);
      const cur = out.at(-1);
      if (cur && cur.t === start) {
        Object.assign(cur, { h: Math.max(cur.h, px.h), l: Math.min(cur.l, px.l), c: px.c, v: cur.v + m.v });
      } else {
        out.push({ t: start, ...px, v: m.v });
      }
    }
    return out;
  }
}

function pick(m: MinuteBar, side: BarSide): Ohlc {
  if (side === 'BID') return m.bid;
  if (side === 'ASK') return m.ask;
  const mid = (a: number, b: number) => Number(((a + b) / 2).toPrecision(12));
  return { o: mid(m.bid.o, m.ask.o), h: mid(m.bid.h, m.ask.h), l: mid(m.bid.l, m.ask.l), c: mid(m.bid.c, m.ask.c) };
}
