import { Decimal, type DecimalValue, dec, roundToStep } from '../domain/decimal.js';
import type { SimInstrumentDef } from './instruments.js';
import type { Quote } from './contract.js';

/** mulberry32: tiny, seedable, and its whole state is one integer, so a snapshot can resume the same walk. */
export class SeededRandom {
  constructor(private state: number) {
    this.state = state >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Standard normal (Box-Muller). */
  gaussian(): number {
    const u = Math.max(this.next(), Number.EPSILON);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  get seedState(): number {
    return this.state;
  }
}

export interface MarketSnapshot {
  mids: Record<string, string>;
  rngState: number;
}

/** Relative size of one random-walk step (about 2 pips on EURUSD). */
const STEP_VOLATILITY = 0.00002;

export class Market {
  private readonly defs = new Map<string, SimInstrumentDef>();
  private readonly mids = new Map<string, Decimal>();
  private readonly times = new Map<string, string>();
  private readonly rng: SeededRandom;

  constructor(
    defs: SimInstrumentDef[],
    private readonly now: () => Date,
    opts: { seed?: number; snapshot?: MarketSnapshot } = {},
  ) {
    this.rng = new SeededRandom(opts.snapshot?.rngState ?? opts.seed ?? 1);
    const at = now().toISOString();
    for (const d of defs) {
      this.defs.set(d.symbol, d);
      this.mids.set(d.symbol, this.normalise(d, dec(opts.snapshot?.mids[d.symbol] ?? d.initialMid)));
      this.times.set(d.symbol, at);
    }
  }

  has(symbol: string): boolean {
    return this.defs.has(symbol);
  }

  mid(symbol: string): Decimal {
    const m = this.mids.get(symbol);
    if (!m) throw new Error(`unknown symbol ${symbol}`);
    return m;
  }

  quote(symbol: string): Quote {
    const d = this.def(symbol);
    const mid = this.mid(symbol);
    const bid = mid.minus(d.tickSize.mul(Math.floor(d.spreadTicks / 2)));
    return { symbol, bid, ask: bid.plus(d.tickSize.mul(d.spreadTicks)), time: this.times.get(symbol)! };
  }

  setMid(symbol: string, mid: DecimalValue): void {
    const d = this.def(symbol);
    this.mids.set(symbol, this.normalise(d, dec(mid)));
    this.times.set(symbol, this.now().toISOString());
  }

  /** One random-walk step for every instrument. */
  step(): void {
    for (const d of this.defs.values()) {
      const mid = this.mid(d.symbol);
      const sigmaTicks = Math.max(1, Math.round((mid.toNumber() * STEP_VOLATILITY) / d.tickSize.toNumber()));
      const deltaTicks = Math.round(this.rng.gaussian() * sigmaTicks);
      this.setMid(d.symbol, mid.plus(d.tickSize.mul(deltaTicks)));
    }
  }

  snapshot(): MarketSnapshot {
    const mids: Record<string, string> = {};
    for (const [s, m] of this.mids) mids[s] = m.toString();
    return { mids, rngState: this.rng.seedState };
  }

  private def(symbol: string): SimInstrumentDef {
    const d = this.defs.get(symbol);
    if (!d) throw new Error(`unknown symbol ${symbol}`);
    return d;
  }

  /** Keeps the mid on the tick grid and high enough that the bid stays positive. */
  private normalise(d: SimInstrumentDef, mid: Decimal): Decimal {
    const floor = d.tickSize.mul(d.spreadTicks + 1);
    return Decimal.max(roundToStep(mid, d.tickSize), floor);
  }
}
