import { Decimal } from '../decimal.js';
import type { ClosedTrade } from './closed-trades.js';

/**
 * Statistics of the trades closed in a period. Money figures are over the trades whose profit is known
 * (`pricedTrades`); a trade whose profit is unavailable is counted in `trades` only.
 */
export interface TradeStats {
  trades: number;
  pricedTrades: number;
  wins: number;
  losses: number;
  /** wins / pricedTrades (0..1); null without a priced trade. */
  winRate: Decimal | null;
  /** Sum of the net profit of winning trades, and of losing ones (negative or zero). */
  grossProfit: Decimal;
  grossLoss: Decimal;
  netProfit: Decimal;
  swap: Decimal;
  commission: Decimal;
  volume: Decimal;
  /** grossProfit / |grossLoss|; null when nothing was lost (no finite ratio). */
  profitFactor: Decimal | null;
  /** Largest fall of the cumulative net realized curve from an earlier peak (the curve starts at 0), >= 0. */
  maxDrawdown: Decimal;
  profitSources: { broker: number; computed: number; unavailable: number };
}

export interface SymbolStats extends TradeStats {
  symbol: string;
}

const zero = () => new Decimal(0);

/** Statistics of `trades` (each counted by its net profit: profit + swap + commission). */
export function tradeStats(trades: readonly ClosedTrade[]): TradeStats {
  const s: TradeStats = {
    trades: trades.length,
    pricedTrades: 0,
    wins: 0,
    losses: 0,
    winRate: null,
    grossProfit: zero(),
    grossLoss: zero(),
    netProfit: zero(),
    swap: zero(),
    commission: zero(),
    volume: zero(),
    profitFactor: null,
    maxDrawdown: zero(),
    profitSources: { broker: 0, computed: 0, unavailable: 0 },
  };
  let peak = zero();
  for (const t of [...trades].sort(byClose)) {
    s.profitSources[t.profitSource]++;
    s.volume = s.volume.plus(t.volume);
    if (t.netProfit === null) continue;
    s.pricedTrades++;
    s.swap = s.swap.plus(t.swap ?? 0);
    s.commission = s.commission.plus(t.commission ?? 0);
    if (t.netProfit.gt(0)) {
      s.wins++;
      s.grossProfit = s.grossProfit.plus(t.netProfit);
    } else if (t.netProfit.lt(0)) {
      s.losses++;
      s.grossLoss = s.grossLoss.plus(t.netProfit);
    }
    s.netProfit = s.netProfit.plus(t.netProfit);
    peak = Decimal.max(peak, s.netProfit);
    s.maxDrawdown = Decimal.max(s.maxDrawdown, peak.minus(s.netProfit));
  }
  if (s.pricedTrades > 0) s.winRate = new Decimal(s.wins).div(s.pricedTrades).toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
  if (!s.grossLoss.isZero())
    s.profitFactor = s.grossProfit.div(s.grossLoss.abs()).toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
  return s;
}

/** The same statistics per symbol, symbols in alphabetical order. */
export function statsBySymbol(trades: readonly ClosedTrade[]): SymbolStats[] {
  const by = new Map<string, ClosedTrade[]>();
  for (const t of trades) by.set(t.symbol, [...(by.get(t.symbol) ?? []), t]);
  return [...by.keys()].sort().map((symbol) => ({ symbol, ...tradeStats(by.get(symbol)!) }));
}

/** The cumulative net realized curve: one point per priced trade, at its close time. */
export function realizedCurve(trades: readonly ClosedTrade[]): { time: string; cumulative: Decimal }[] {
  let total = zero();
  const out: { time: string; cumulative: Decimal }[] = [];
  for (const t of [...trades].sort(byClose)) {
    if (t.netProfit === null) continue;
    total = total.plus(t.netProfit);
    out.push({ time: t.closeTime, cumulative: total });
  }
  return out;
}

/** Trades closed in [from, to). */
export function closedIn(trades: readonly ClosedTrade[], from: Date, to: Date): ClosedTrade[] {
  return trades.filter((t) => {
    const ms = Date.parse(t.closeTime);
    return ms >= from.getTime() && ms < to.getTime();
  });
}

const byClose = (a: ClosedTrade, b: ClosedTrade) => Date.parse(a.closeTime) - Date.parse(b.closeTime);
