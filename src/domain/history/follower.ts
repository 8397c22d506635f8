import { Decimal } from '../decimal.js';
import type { CopyIntent, PositionLink } from '../ledger-types.js';
import type { ClosedTrade } from './closed-trades.js';
import { sum } from './closed-trades.js';

/** A Slave's closed trade beside the Master trade it copied, the Master's profit scaled to the copy's volume. */
export interface MasterSide {
  accountId: string;
  positionId: string;
  /** The Master trade as its own history has it; null when it is not (yet) closed or was not read. */
  tradeId: string | null;
  volume: Decimal | null;
  profit: Decimal | null;
  /** Copy volume / Master volume; null when the Master trade was not found. */
  ratio: Decimal | null;
  /** The Master's profit x ratio: what the copy would have realized at the Master's prices. */
  scaledProfit: Decimal | null;
}

export interface FollowedTrade extends ClosedTrade {
  /** Null for a trade not made by copying (no position link). */
  master: MasterSide | null;
}

/**
 * Pairs a Slave's closed trades with its Masters' (the position links say which Master position each Slave
 * position copies). `masterTrades` holds the closed trades of each Master account read, by account id.
 */
export function pairWithMasters(
  slaveTrades: readonly ClosedTrade[],
  links: readonly PositionLink[],
  masterTrades: ReadonlyMap<string, readonly ClosedTrade[]>,
): FollowedTrade[] {
  const linkOf = new Map(links.filter((l) => l.kind === 'position').map((l) => [l.slavePositionId, l]));
  return slaveTrades.map((t) => {
    const link = linkOf.get(t.positionId);
    if (!link) return { ...t, master: null };
    const m = masterTradeFor(masterTrades.get(link.masterAccountId) ?? [], link.masterPositionId, t);
    const ratio = m && !m.volume.isZero() ? t.volume.div(m.volume) : null;
    return {
      ...t,
      master: {
        accountId: link.masterAccountId,
        positionId: link.masterPositionId,
        tradeId: m?.id ?? null,
        volume: m?.volume ?? null,
        profit: m?.profit ?? null,
        ratio: ratio?.toDecimalPlaces(6, Decimal.ROUND_HALF_UP) ?? null,
        scaledProfit: m?.profit && ratio ? m.profit.mul(ratio).toDecimalPlaces(2, Decimal.ROUND_HALF_UP) : null,
      },
    };
  });
}

/** The Master trade of a position the copy belongs to: the latest one opened no later than the copy closed. */
function masterTradeFor(trades: readonly ClosedTrade[], positionId: string, copy: ClosedTrade): ClosedTrade | null {
  const mine = trades.filter((m) => m.positionId === positionId);
  const before = mine.filter((m) => !m.openTime || Date.parse(m.openTime) <= Date.parse(copy.closeTime));
  return before[before.length - 1] ?? mine[0] ?? null;
}

/** The copy beside the Master over a set of followed trades: both realized sums over the trades paired. */
export interface TrackingSummary {
  pairedTrades: number;
  copyProfit: Decimal;
  masterScaledProfit: Decimal;
  /** copyProfit - masterScaledProfit: what copying cost (negative) or gained against the Master's prices. */
  difference: Decimal;
}

export function trackingSummary(trades: readonly FollowedTrade[]): TrackingSummary {
  const paired = trades.filter((t) => t.profit !== null && t.master?.scaledProfit);
  const copyProfit = sum(paired.map((t) => t.profit)) ?? new Decimal(0);
  const masterScaledProfit = sum(paired.map((t) => t.master!.scaledProfit)) ?? new Decimal(0);
  return {
    pairedTrades: paired.length,
    copyProfit,
    masterScaledProfit,
    difference: copyProfit.minus(masterScaledProfit),
  };
}

/** How the copies of a Slave went over a period, from the copy ledger. */
export interface CopyQuality {
  intents: number;
  /** Sent to the broker (or settling): confirmed + rejected + unresolved + in flight. */
  attempted: number;
  confirmed: number;
  rejected: number;
  unresolved: number;
  /** Decided without a send: by a copy rule (skipped) or the risk guard (denied). */
  skipped: number;
  denied: number;
  /** confirmed / attempted; null when nothing was sent. */
  successRatio: Decimal | null;
  /** Mean of the recorded slippage of confirmed copies (price units, positive = worse than the Master). */
  meanSlippage: Decimal | null;
  bySymbol: { symbol: string; confirmed: number; meanSlippage: Decimal | null }[];
}

export function copyQuality(intents: readonly CopyIntent[]): CopyQuality {
  const n = (state: string) => intents.filter((i) => i.state === state).length;
  const confirmed = intents.filter((i) => i.state === 'confirmed');
  const skipped = n('skipped');
  const denied = n('denied');
  const attempted = intents.length - skipped - denied;
  const symbols = [...new Set(confirmed.map((i) => i.symbol))].sort();
  return {
    intents: intents.length,
    attempted,
    confirmed: confirmed.length,
    rejected: n('rejected'),
    unresolved: n('unresolved'),
    skipped,
    denied,
    successRatio:
      attempted > 0 ? new Decimal(confirmed.length).div(attempted).toDecimalPlaces(4, Decimal.ROUND_HALF_UP) : null,
    meanSlippage: mean(confirmed.map((i) => i.slippage)),
    bySymbol: symbols.map((symbol) => {
      const of = confirmed.filter((i) => i.symbol === symbol);
      return { symbol, confirmed: of.length, meanSlippage: mean(of.map((i) => i.slippage)) };
    }),
  };
}

function mean(values: readonly (Decimal | null)[]): Decimal | null {
  const known = values.filter((v): v is Decimal => v !== null);
  if (known.length === 0) return null;
  return sum(known)!.div(known.length).toDecimalPlaces(8, Decimal.ROUND_HALF_UP);
}
