import { Decimal } from '../../domain/decimal.js';

export type BreachAction = 'pause' | 'close_and_pause';
export type RiskRule = 'max_drawdown' | 'daily_loss' | 'max_open_volume';

/** Limits as stored and sent: decimals as strings, null = no limit (or, on an account, inherit the group's). */
export interface RiskLimits {
  /** Largest fall of equity from its peak, in percent of the peak. */
  maxDrawdownPercent: string | null;
  /** Largest loss of equity since the start of the trading day, in account currency. */
  dailyLossLimit: string | null;
  /** Largest total volume (lots) of open positions. */
  maxOpenVolume: string | null;
  /** null on an account = take the group's (pause when neither says). */
  onBreach: BreachAction | null;
  /** Hour (UTC) the trading day starts: 0 = midnight UTC; prop firms often use 21 or 22 (17:00 New York). */
  dayResetHourUtc: number | null;
  /** Skip copies without a stop loss while a daily loss limit applies (their loss cannot be bounded). */
  requireStopLoss: boolean | null;
}

export interface EffectiveLimits {
  maxDrawdownPercent: Decimal | null;
  dailyLossLimit: Decimal | null;
  maxOpenVolume: Decimal | null;
  onBreach: BreachAction;
  dayResetHourUtc: number;
  requireStopLoss: boolean;
}

export const NO_LIMITS: RiskLimits = {
  maxDrawdownPercent: null,
  dailyLossLimit: null,
  maxOpenVolume: null,
  onBreach: null,
  dayResetHourUtc: null,
  requireStopLoss: null,
};

const stricter = (a: string | null | undefined, b: string | null | undefined): Decimal | null => {
  const xs = [a, b].filter((x): x is string => x !== null && x !== undefined).map((x) => new Decimal(x));
  return xs.length === 0 ? null : Decimal.min(...xs);
};

/**
 * A Slave's limits: its own and its group's, the stricter of each (a group limit applies to every Slave of the
 * group on its own equity). null when nothing is limited.
 */
export function effectiveLimits(own: RiskLimits | null, group: RiskLimits | null): EffectiveLimits | null {
  const e: EffectiveLimits = {
    maxDrawdownPercent: stricter(own?.maxDrawdownPercent, group?.maxDrawdownPercent),
    dailyLossLimit: stricter(own?.dailyLossLimit, group?.dailyLossLimit),
    maxOpenVolume: stricter(own?.maxOpenVolume, group?.maxOpenVolume),
    onBreach:
      own?.onBreach === 'close_and_pause' || group?.onBreach === 'close_and_pause' ? 'close_and_pause' : 'pause',
    dayResetHourUtc: own?.dayResetHourUtc ?? group?.dayResetHourUtc ?? 0,
    requireStopLoss: Boolean(own?.requireStopLoss ?? group?.requireStopLoss ?? false),
  };
  return e.maxDrawdownPercent || e.dailyLossLimit || e.maxOpenVolume ? e : null;
}
