import type { OrderOutcome } from '../platforms/adapter.js';

/** A refusal for going too fast: nothing was applied, so sending again after the broker's hint is safe. */
export function rateLimitWaitMs(o: OrderOutcome, fallbackMs: number): number | null {
  if (o.kind !== 'rejected' && o.kind !== 'denied') return null;
  if (o.code !== 'rate_limited') return null;
  const raw = o.kind === 'rejected' ? (o.raw as { retryAfterSec?: unknown } | undefined) : undefined;
  const sec = typeof raw?.retryAfterSec === 'number' && Number.isFinite(raw.retryAfterSec) ? raw.retryAfterSec : null;
  return sec !== null && sec >= 0 ? sec * 1000 : fallbackMs;
}
