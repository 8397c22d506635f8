import type { Platform } from '../domain/types.js';
import type { OrderOutcome } from '../platforms/adapter.js';

/** One ledger row as recorded, before anything is sent. */
export interface RecordedRow {
  platform: Platform;
  /** `skipped` or `denied`. */
  state: string;
  /** `code: detail` for a skip or a denial. */
  skipReason: string | null;
}

/**
 * What the copy engine tells an onlooker (the metrics): told after the fact, never asked, so an observer
 * cannot change or slow a copy. Calls are synchronous and must not throw.
 */
export interface CopyObserver {
  /** The rows of one action that will not be sent (skipped or denied), once durable; a row sent is told by `settled`. */
  recorded(rows: readonly RecordedRow[]): void;
  /** One broker answer to a copy write; `resend` when it answers a send repeated after a rate-limit refusal. */
  answered(platform: Platform, outcome: OrderOutcome, resend: boolean): void;
  /** A send's final outcome, with each hop's latency in ms (plan, record, send, ack); attempt > 1: a settle resend. */
  settled(
    platform: Platform,
    outcome: OrderOutcome,
    latencyMs: Readonly<Record<string, number>>,
    attempt: number,
  ): void;
}
