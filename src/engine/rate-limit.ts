import { setTimeout as delay } from 'node:timers/promises';
import { isStoppedByChoice } from '../domain/account.js';
import type { AccountStatus } from '../domain/types.js';
import { StaleLeaseError } from '../domain/lease.js';
import { rejected, type OrderOutcome } from '../platforms/adapter.js';

/**
 * Whether the broker asked for this write again later, and its hint (ms) when it gave one. Only a definite refusal
 * counts (rejected, or denied before it left us), never an unknown outcome: that one is settled by its tag.
 * Retryable: what the adapter marked so (`retry`: a 429, a request frequency limit), and any refusal coded
 * `rate_limited` (older adapters carried the hint in `raw.retryAfterSec` only).
 */
export function retryHint(o: OrderOutcome): { retryable: false } | { retryable: true; afterMs: number | null } {
  if (o.kind !== 'rejected' && o.kind !== 'denied') return { retryable: false };
  if (!o.retry && o.code !== 'rate_limited') return { retryable: false };
  const raw = o.kind === 'rejected' ? (o.raw as { retryAfterSec?: unknown } | undefined) : undefined;
  const sec = o.retry?.afterSec ?? raw?.retryAfterSec;
  return {
    retryable: true,
    afterMs: typeof sec === 'number' && Number.isFinite(sec) && sec >= 0 ? sec * 1000 : null,
  };
}

/**
 * A refusal for going too fast (`rate_limited` only, as the panic-close rounds want it): nothing was applied, so
 * sending again after the broker's hint is safe.
 */
export function rateLimitWaitMs(o: OrderOutcome, fallbackMs: number): number | null {
  if ((o.kind !== 'rejected' && o.kind !== 'denied') || o.code !== 'rate_limited') return null;
  const h = retryHint(o);
  return h.retryable ? (h.afterMs ?? fallbackMs) : null;
}

/** The wait before a try when the broker gave no hint. */
const NO_HINT_MS = 1000;
/** From the second refusal on, the wait doubles from this, whatever the broker's hint (never less than it). */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 8000;

/**
 * The wait after the refusal numbered `refused` (0 = the first send's): the broker's hint, never less than a backoff
 * that starts at the second refusal (0.5 s, doubling, at most 8 s). Without a hint, 1 s and then the backoff.
 */
export function retryWaitMs(afterMs: number | null, refused: number): number {
  const backoff = refused === 0 ? 0 : Math.min(BACKOFF_FIRST_MS * 2 ** (refused - 1), BACKOFF_MAX_MS);
  return Math.max(afterMs ?? NO_HINT_MS, backoff);
}

/** How long a copy keeps trying while its broker refuses it for now. */
export interface RetryWindow {
  /** The engine's clock (ms since the epoch). */
  now: () => number;
  /** Past this (engine clock) no try is made: a wait that would end after it ends the copy instead. */
  deadlineAt: number;
  /** What the deadline is, for the reason written when it is reached: "max delay (60 s since the Master's action)". */
  limit: string;
  /** How to wait (tests pass one that moves their clock). Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Asked before each retry, after the wait: an outcome to end with instead (the Slave was paused or locked since,
   * say), or null to send again.
   */
  stop?: () => Promise<OrderOutcome | null>;
}

const timer = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * One write, sent again while the broker refuses it for now (a 429, a request frequency limit: the refusal proves
 * nothing was applied), after the broker's hint and a growing backoff, until the window's deadline: a try that
 * could only be made after it is not made, and the last refusal is the outcome, its message saying why. An unknown
 * outcome is never sent again here.
 */
export async function sendPaced(
  send: () => Promise<OrderOutcome>,
  /** Asked once, at the first refusal to retry (nothing is built for a copy the broker takes at once). */
  windowOf: () => RetryWindow,
  /** Told each answer as it comes, with its attempt (0 = the first send); not told a send that threw. */
  answered?: (outcome: OrderOutcome, retry: number) => void,
): Promise<OrderOutcome> {
  let window: RetryWindow | null = null;
  let firstAt = 0;
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
    const hint = retryHint(outcome);
    if (!hint.retryable) return outcome;
    if (!window) {
      window = windowOf();
      firstAt = window.now();
    }
    const waitMs = retryWaitMs(hint.afterMs, retry);
    const now = window.now();
    if (now + waitMs > window.deadlineAt) return gaveUp(outcome, retry + 1, now - firstAt, waitMs, window.limit);
    try {
      await (window.sleep ?? timer)(waitMs);
    } catch (err) {
      if (!(err instanceof RetrySuperseded)) throw err;
      return rejected(
        'superseded',
        `stopped retrying after ${retry + 1} ${retry === 0 ? 'try' : 'tries'}: ${err.message}; last answer: ${(outcome as { message?: string }).message ?? outcome.kind}`,
      );
    }
    const stopped = await window.stop?.();
    if (stopped) return stopped;
  }
}

/** The last refusal, its message saying the copy stopped trying and why. */
function gaveUp(last: OrderOutcome, tries: number, overMs: number, nextWaitMs: number, limit: string): OrderOutcome {
  if (last.kind !== 'rejected' && last.kind !== 'denied') return last;
  const message =
    `gave up after ${tries} ${tries === 1 ? 'try' : 'tries'} over ${seconds(overMs)}: ${limit} passed` +
    ` (the next try, in ${seconds(nextWaitMs)}, would be after it); last answer: ${last.message}`;
  return { ...last, message };
}

/** A write that does not add exposure (a close, an SL/TP change) keeps trying at least this long from its first refusal. */
const NO_STALE_RETRY_MS = 120_000;

/**
 * The retry window of one copy: a write that adds exposure (an open) tries until the rule's max delay has passed
 * since the Master's action, and stops when the Slave was paused, locked (a panic-close) or disabled meanwhile;
 * one that does not (a close, an SL/TP change) never goes stale and tries for the longer of the max delay and
 * 2 minutes from its first refusal.
 */
export function copyRetryWindow(o: {
  now: () => number;
  sleep: ((ms: number) => Promise<void>) | undefined;
  /** Where the copy's waits are counted for admission control, under the Slave's account id. */
  holds?: { registry: RetryHolds; accountId: string; topic?: string };
  actionAt: number;
  maxDelayMs: number;
  addsExposure: boolean;
  /** The Slave's status now (a store read); null or a throw: keep trying. */
  slaveStatus: () => Promise<AccountStatus | null>;
}): RetryWindow {
  const staleAt = o.actionAt + o.maxDelayMs;
  const holds = o.holds;
  const sleep = holds
    ? (ms: number) =>
        holds.registry.wait(
          holds.accountId,
          o.now() + ms,
          (signal) => (o.sleep ? o.sleep(ms) : delay(ms, undefined, { signal })),
          holds.topic,
        )
    : o.sleep;
  const maxDelay = `max delay (${seconds(o.maxDelayMs)} since the Master's action)`;
  if (!o.addsExposure) {
    const until = o.now() + NO_STALE_RETRY_MS;
    return until > staleAt
      ? { now: o.now, sleep, deadlineAt: until, limit: `retry window (${seconds(NO_STALE_RETRY_MS)})` }
      : { now: o.now, sleep, deadlineAt: staleAt, limit: maxDelay };
  }
  let tries = 1;
  return {
    now: o.now,
    sleep,
    deadlineAt: staleAt,
    limit: maxDelay,
    stop: async () => {
      const status = await o.slaveStatus().catch(() => null);
      if (!status || !isStoppedByChoice(status)) {
        tries++;
        return null;
      }
      return rejected(
        'slave_not_eligible',
        `stopped retrying after ${tries} ${tries === 1 ? 'try' : 'tries'}: the account is ${status} now`,
      );
    },
  };
}

/**
 * Thrown out of a copy's wait when the process stops (RetryHolds.stop): nothing more is sent, and no outcome is
 * written. The row stays as recorded (or `sent`, for a settle resend), and the next settle pass, of this process's
 * successor or the lease's new holder, looks its tag up and sends it again while it is fresh.
 */
export class RetriesStopped extends Error {
  constructor() {
    super('stopped waiting to send again: the process is stopping');
    this.name = 'RetriesStopped';
  }
}

/**
 * Thrown out of an open's wait when the Master's position (or pending order) it copies has been closed (cancelled)
 * meanwhile: there is nothing left to open, and the Master's close must not wait up to a max delay behind it.
 */
export class RetrySuperseded extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'RetrySuperseded';
  }
}

/** The topic under which an open of a Master's position or pending order waits (RetryHolds.supersede). */
export const retryTopic = (masterAccountId: string, kind: 'position' | 'order', itemId: string) =>
  `${masterAccountId}:${kind}:${itemId}`;

/**
 * Per Slave account, the copies waiting out a refusal their broker said to retry, and until when (engine clock) the
 * broker asked us to wait. Neither is in the dispatcher's queue, so admission control reads them here: a copy of a
 * new order to that Slave waits behind them. `stop()` ends every wait at once, so a stopping process does not wait
 * up to a rule's max delay for its copies' retries.
 */
export class RetryHolds {
  private readonly byAccount = new Map<string, { waiting: number; until: number }>();
  private readonly stopping = new AbortController();
  /** Per topic (retryTopic), how to end each wait under it. */
  private readonly byTopic = new Map<string, Set<(err: Error) => void>>();

  /**
   * Ends every wait under `topic` now (RetrySuperseded): the Master closed the position, or cancelled the pending
   * order, that those copies would open.
   */
  supersede(topic: string, why: string): void {
    for (const end of this.byTopic.get(topic) ?? []) end(new RetrySuperseded(why));
  }

  /** Runs one wait (`sleep`) that the broker asked for until `until`, counted while it lasts. */
  async wait(
    accountId: string,
    until: number,
    sleep: (signal: AbortSignal) => Promise<void>,
    /** Where `supersede` can end it (retryTopic). */
    topic?: string,
  ): Promise<void> {
    const signal = this.stopping.signal;
    if (signal.aborted) throw new RetriesStopped();
    let h = this.byAccount.get(accountId);
    if (!h) this.byAccount.set(accountId, (h = { waiting: 0, until }));
    h.waiting++;
    h.until = Math.max(h.until, until);
    try {
      await new Promise<void>((resolve, reject) => {
        const onStop = () => reject(new RetriesStopped());
        signal.addEventListener('abort', onStop, { once: true });
        let ends: Set<(err: Error) => void> | undefined;
        if (topic !== undefined) {
          ends = this.byTopic.get(topic);
          if (!ends) this.byTopic.set(topic, (ends = new Set()));
          ends.add(reject);
        }
        sleep(signal)
          .then(resolve, reject)
          .finally(() => {
            signal.removeEventListener('abort', onStop);
            if (ends && topic !== undefined) {
              ends.delete(reject);
              if (ends.size === 0 && this.byTopic.get(topic) === ends) this.byTopic.delete(topic);
            }
          });
      });
    } finally {
      h.waiting--;
      if (h.waiting === 0 && this.byAccount.get(accountId) === h) this.byAccount.delete(accountId);
    }
  }

  /** Ends every wait now and refuses new ones (RetriesStopped): the process is stopping. */
  stop(): void {
    this.stopping.abort();
  }

  /** Copies of this Slave waiting to be sent again, and how long (ms) until the latest of their waits ends. */
  of(accountId: string, now: number): { waiting: number; heldForMs: number } {
    const h = this.byAccount.get(accountId);
    return h ? { waiting: h.waiting, heldForMs: Math.max(0, h.until - now) } : { waiting: 0, heldForMs: 0 };
  }
}
