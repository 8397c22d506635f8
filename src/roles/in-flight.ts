import type { Logger } from 'pino';
import { settleInFlightKeys } from '../api/idempotency-settle.js';
import type { Store } from '../store/store.js';

/**
 * On a store shared by several processes, a key in flight for this long belongs to a process that stopped:
 * no request of ours runs for 2 minutes (a panic-close waits at most 30 s, broker calls time out in seconds).
 */
export const IN_FLIGHT_STALE_MS = 120_000;

/** Idempotency keys left in flight by a stopped process (before `before`) are answered or freed. */
export async function settleKeys(
  store: Store,
  instanceId: string,
  before: Date,
  logger: Logger | false,
): Promise<void> {
  const onError = (err: unknown) => logger && logger.error({ err }, 'idempotency key left in flight not settled');
  try {
    const r = await settleInFlightKeys(store, { instanceId, before, onError });
    if (logger && r.answered + r.freed > 0)
      logger.info(r, 'idempotency keys left in flight by a stopped process settled');
  } catch (err) {
    onError(err);
  }
}

/** On a store shared by several processes: a sibling may stop at any time, its keys are settled once older than any request. */
export function sweepInFlightKeys(
  store: Store,
  instanceId: string,
  logger: Logger | false,
  cleanup: Array<() => Promise<void>>,
): void {
  const sweep = setInterval(
    () => void settleKeys(store, instanceId, new Date(Date.now() - IN_FLIGHT_STALE_MS), logger),
    30_000,
  );
  sweep.unref();
  cleanup.unshift(async () => clearInterval(sweep));
}
