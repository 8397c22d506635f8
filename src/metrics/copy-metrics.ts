import { Counter, type Registry } from 'prom-client';
import { TwoLabelCounter, TwoLabelHistogram } from './series.js';
import type { Platform } from '../domain/types.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { CopyObserver, RecordedRow } from '../engine/copy-observer.js';

/** Hop latencies run from well under a millisecond (plan) to a broker's timeout (ack). */
const HOP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HOPS = ['plan', 'record', 'send', 'ack'] as const;

/**
 * A skip or denial reads `code: detail`; only the code is a label (the detail names symbols and volumes,
 * unbounded). Anything that does not look like a code is `other`, so a new free-text reason cannot blow up
 * the series count.
 */
export function reasonCode(reason: string | null): string {
  const code = (reason ?? '').split(/[:;]/, 1)[0]!.trim();
  return /^[a-z][a-z0-9_]{0,63}$/.test(code) ? code : 'other';
}

/**
 * The copy engine's numbers, labelled by platform and reason only: never a user, account or trade id (a
 * scrape must not tell who trades how much, and ids would make a series per account).
 */
export class CopyMetrics implements CopyObserver {
  // Counted for each Slave of every fan-out: series of our own (series.ts), without prom-client's per-observation
  // label object and key string. The rate-limit counter is rare and stays prom-client's.
  private readonly hops: TwoLabelHistogram<'hop', 'platform'>;
  private readonly outcomes: TwoLabelCounter<'outcome', 'platform'>;
  private readonly skips: TwoLabelCounter<'reason', 'platform'>;
  private readonly rateLimited: Counter<'platform'>;
  private readonly retries: TwoLabelCounter<'reason', 'platform'>;

  constructor(registry: Registry) {
    this.hops = new TwoLabelHistogram(
      'copytrade_copy_hop_seconds',
      'Latency of each hop of a copy: plan (decisions), record (intents durable), send (durable to the send starting), ack (send to broker answer: pacing waits and rate-limit resends included)',
      ['hop', 'platform'],
      HOP_BUCKETS,
      registry,
    );
    this.outcomes = new TwoLabelCounter(
      'copytrade_copy_outcomes_total',
      'Copy ledger rows by outcome: skipped or denied when planned; confirmed, rejected, denied or unresolved when sent',
      ['outcome', 'platform'],
      registry,
    );
    this.skips = new TwoLabelCounter(
      'copytrade_copy_skips_total',
      'Copies not sent, by reason code',
      ['reason', 'platform'],
      registry,
    );
    this.rateLimited = new Counter({
      name: 'copytrade_broker_rate_limited_total',
      help: "Copy writes a broker refused for its rate limit (HTTP 429 or the platform's equivalent)",
      labelNames: ['platform'],
      registers: [registry],
    });
    this.retries = new TwoLabelCounter(
      'copytrade_copy_retries_total',
      'Copy writes sent again: after a rate-limit refusal, or by the settle loop once proven absent',
      ['reason', 'platform'],
      registry,
    );
  }

  recorded(rows: readonly RecordedRow[]): void {
    for (const r of rows) {
      if (r.state === 'planned') continue;
      this.outcomes.inc(r.state, r.platform);
      if (r.state === 'skipped') this.skips.inc(reasonCode(r.skipReason), r.platform);
    }
  }

  answered(platform: Platform, outcome: OrderOutcome, resend: boolean): void {
    if (resend) this.retries.inc('rate_limited', platform);
    if (outcome.kind !== 'confirmed' && outcome.code === 'rate_limited') this.rateLimited.inc({ platform });
  }

  settled(
    platform: Platform,
    outcome: OrderOutcome,
    latencyMs: Readonly<Record<string, number>>,
    attempt: number,
  ): void {
    this.outcomes.inc(outcome.kind, platform);
    if (attempt > 1) this.retries.inc('settle_resend', platform);
    // Keyed reads, not Object.entries: no array of pairs made for each settled write.
    for (const hop of HOPS) {
      const ms = latencyMs[hop];
      if (ms !== undefined && Number.isFinite(ms) && ms >= 0) this.hops.observe(hop, platform, ms / 1000);
    }
  }
}
