import { Decimal } from '../../domain/decimal.js';
import type { EffectiveLimits, RiskRule } from './limits.js';

/** What the monitor remembers per account between samples (stored as strings). */
export interface RiskState {
  peakEquity: string | null;
  /** Trading day the start equity belongs to (YYYY-MM-DD after shifting by the reset hour). */
  dayKey: string | null;
  dayStartEquity: string | null;
  lastEquity: string | null;
  lastOpenVolume: string | null;
  sampledAt: string | null;
  lastBreach: { rule: RiskRule; detail: string; at: string; action: string } | null;
}

export const EMPTY_STATE: RiskState = {
  peakEquity: null,
  dayKey: null,
  dayStartEquity: null,
  lastEquity: null,
  lastOpenVolume: null,
  sampledAt: null,
  lastBreach: null,
};

export interface Sample {
  equity: Decimal;
  openVolume: Decimal;
  at: Date;
}

export const dayKeyOf = (at: Date, resetHourUtc: number) =>
  new Date(at.getTime() - resetHourUtc * 3600_000).toISOString().slice(0, 10);

/** Pure: the next state after a sample, and the first limit it breaks (drawdown, then daily loss, then volume). */
export function evaluate(
  limits: EffectiveLimits,
  prev: RiskState,
  s: Sample,
): { state: RiskState; breach: { rule: RiskRule; detail: string } | null } {
  const dayKey = dayKeyOf(s.at, limits.dayResetHourUtc);
  const dayStart = prev.dayKey === dayKey && prev.dayStartEquity !== null ? new Decimal(prev.dayStartEquity) : s.equity;
  const peak = prev.peakEquity === null ? s.equity : Decimal.max(new Decimal(prev.peakEquity), s.equity);
  const state: RiskState = {
    ...prev,
    peakEquity: peak.toString(),
    dayKey,
    dayStartEquity: dayStart.toString(),
    lastEquity: s.equity.toString(),
    lastOpenVolume: s.openVolume.toString(),
    sampledAt: s.at.toISOString(),
  };
  let breach: { rule: RiskRule; detail: string } | null = null;
  if (limits.maxDrawdownPercent && peak.gt(0)) {
    const dd = peak.minus(s.equity).div(peak).mul(100);
    if (dd.gte(limits.maxDrawdownPercent))
      breach = {
        rule: 'max_drawdown',
        detail: `equity ${s.equity} is ${dd.toDecimalPlaces(2)}% below its peak ${peak} (limit ${limits.maxDrawdownPercent}%)`,
      };
  }
  if (!breach && limits.dailyLossLimit) {
    const loss = dayStart.minus(s.equity);
    if (loss.gte(limits.dailyLossLimit))
      breach = {
        rule: 'daily_loss',
        detail: `lost ${loss.toDecimalPlaces(2)} today (equity ${s.equity} from ${dayStart}; limit ${limits.dailyLossLimit})`,
      };
  }
  if (!breach && limits.maxOpenVolume && s.openVolume.gt(limits.maxOpenVolume)) {
    breach = { rule: 'max_open_volume', detail: `${s.openVolume} lots open (limit ${limits.maxOpenVolume})` };
  }
  return { state, breach };
}

/** What may still be lost today; null without a daily limit. */
export function remainingDailyLoss(limits: EffectiveLimits, state: RiskState): Decimal | null {
  if (!limits.dailyLossLimit) return null;
  const start =
    state.dayStartEquity === null || state.lastEquity === null
      ? new Decimal(0)
      : new Decimal(state.dayStartEquity).minus(state.lastEquity);
  return limits.dailyLossLimit.minus(Decimal.max(start, 0));
}
