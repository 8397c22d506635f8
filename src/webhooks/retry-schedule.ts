export interface RetryPolicy {
  scheduleMs: number[];
  jitter: number;
  maxRetryAfterMs: number;
}

/**
 * Delay before attempt number `attempt` (1 = first) of one event. The schedule's last entry repeats, because
 * an endpoint never skips past a failing event (per-account order): it keeps trying until it succeeds or the
 * failure window disables it. A receiver's Retry-After is a floor, capped so a receiver cannot park an
 * endpoint for ever.
 */
export function retryDelay(
  attempt: number,
  policy: RetryPolicy,
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): number {
  const { scheduleMs } = policy;
  if (scheduleMs.length === 0) return 0;
  const base = scheduleMs[Math.min(Math.max(attempt - 1, 0), scheduleMs.length - 1)]!;
  const spread = base * policy.jitter * (random() * 2 - 1);
  const delay = Math.max(0, Math.round(base + spread));
  if (retryAfterMs === null) return delay;
  return Math.max(delay, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
