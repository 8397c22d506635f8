import { StaleLeaseError } from '../domain/lease.js';
import type { OrderOutcome } from '../platforms/adapter.js';

/** A refusal for going too fast: nothing was applied, so sending again after the broker's hint is safe. */
export function rateLimitWaitMs(o: OrderOutcome, fallbackMs: number): number | null {
  if (o.kind !== 'rejected' && o.kind !== 'denied') return null;
  if (o.code !== 'rate_limited') return null;
  const raw = o.kind === 'rejected' ? (o.raw as { retryAfterSec?: unknown } | undefined) : undefined;
  const sec = typeof raw?.retryAfterSec === 'number' && Number.isFinite(raw.retryAfterSec) ? raw.retryAfterSec : null;
  return sec !== null && sec >= 0 ? sec * 1000 : fallbackMs;
}

/** Sends of one copy refused for the broker's rate limit before the refusal is its outcome. */
const RATE_LIMIT_RETRIES = 4;

/**
 * One write, sent again while the broker refuses it for going too fast (that proves nothing was applied),
 * after the broker's hint, a few times, until `tooLate(waitMs)` says the copy would go stale in the wait
 * (a burst shared by several connections of one broker login).
 */
export async function sendPaced(
  send: () => Promise<OrderOutcome>,
  tooLate: (waitMs: number) => boolean,
  /** Told each answer as it comes, with its attempt (0 = the first send); not told a send that threw. */
  answered?: (outcome: OrderOutcome, retry: number) => void,
): Promise<OrderOutcome> {
  let outcome: OrderOutcome;
  for (let retry = 0; ; retry++) {
    let sent = true;
    try {
      outcome = await send();
    } catch (err) {
      sent = false;
      // Refused for a lost lease before anything left: the row stays as recorded for the lease's new holder.
      if (err instanceof StaleLeaseError) throw err;
      // An adapter that throws on a write broke its contract; we cannot know if it applied: unresolved.
      outcome = {
        kind: 'unresolved',
        code: 'adapter_error',
        message: err instanceof Error ? err.message : String(err),
      };
    }
    if (sent && answered)
      try {
        answered(outcome, retry);
      } catch {
        // An onlooker's failure (the metrics) must not turn what the broker said into an unknown outcome.
      }
    const wait = rateLimitWaitMs(outcome, 1000);
    if (wait === null || retry >= RATE_LIMIT_RETRIES) return outcome;
    const waitMs = Math.min(wait, 30_000);
    if (tooLate(waitMs)) return outcome;
    await new Promise((r) => setTimeout(r, waitMs));
  }
}
