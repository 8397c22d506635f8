/** The 18 route types /trade/config.rateLimits names; the real API serves an entry for each. */
export const RATE_LIMIT_TYPES = [
  'GET_ACCOUNTS',
  'GET_EXECUTIONS',
  'GET_INSTRUMENTS',
  'GET_ORDERS',
  'GET_ORDERS_HISTORY',
  'GET_POSITIONS',
  'GET_ACCOUNTS_STATE',
  'GET_INSTRUMENT_DETAILS',
  'GET_TRADE_SESSIONS',
  'GET_SESSION_STATUSES',
  'PLACE_ORDER',
  'MODIFY_ORDER',
  'MODIFY_POSITION',
  'DAILY_BAR',
  'QUOTES',
  'DEPTH',
  'TRADES',
  'QUOTES_HISTORY',
] as const;

export interface RateLimitEntry {
  rateLimitType: string;
  measure: 'SECONDS' | 'MINUTES';
  intervalNum: number;
  limit: number;
}

/**
 * Defaults are generous enough for the conformance suite and the demo, low enough that a client which
 * ignores the served config is caught in a tight loop. Tests pass their own tighter entries.
 */
export function defaultRateLimits(): RateLimitEntry[] {
  return RATE_LIMIT_TYPES.map((t) => ({
    rateLimitType: t,
    measure: 'SECONDS',
    intervalNum: 1,
    limit: t === 'QUOTES' ? 50 : 20,
  }));
}

export function mergeRateLimits(overrides: RateLimitEntry[] | undefined): RateLimitEntry[] {
  const base = defaultRateLimits();
  for (const o of overrides ?? []) {
    const i = base.findIndex((b) => b.rateLimitType === o.rateLimitType);
    if (i >= 0) base[i] = o;
    else base.push(o);
  }
  return base;
}

export const intervalMs = (e: RateLimitEntry): number => e.intervalNum * (e.measure === 'MINUTES' ? 60_000 : 1000);

/** Sliding window per key, because "at most N per interval" is what the config promises for any window. */
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly entries: RateLimitEntry[]) {}

  /** Returns null when allowed (and counts the hit), else the seconds until a slot frees up. */
  hit(key: string, type: string, now = Date.now()): number | null {
    const e = this.entries.find((x) => x.rateLimitType === type);
    if (!e) return null;
    const win = intervalMs(e);
    const k = `${key}|${type}`;
    const list = (this.hits.get(k) ?? []).filter((t) => t > now - win);
    if (list.length >= e.limit) {
      this.hits.set(k, list);
      return Math.max(1, Math.ceil((list[0]! + win - now) / 1000));
    }
    list.push(now);
    this.hits.set(k, list);
    return null;
  }
}
