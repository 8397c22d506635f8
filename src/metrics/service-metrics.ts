import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { PostResult } from '../webhooks/http-post.js';
import { CopyMetrics } from './copy-metrics.js';

/** What the gauges read at scrape time (absent parts read 0: an api process has no dispatcher). */
export interface GaugeSources {
  /** Copy writes queued or on the wire in this process. */
  queueDepth?: () => number;
  /** Panic-close jobs this process is running. */
  panicJobsRunning?: () => number;
  /** Broker-connection leases this process holds (a worker's lease keeper). */
  leasesHeld?: () => number;
}

/** A webhook attempt's result as a bounded label. */
export function webhookResult(r: PostResult): string {
  if (r.ok) return 'delivered';
  if (r.status !== null)
    return r.status >= 400 && r.status < 600 ? `http_${Math.floor(r.status / 100)}xx` : 'http_other';
  const e = r.error ?? '';
  if (e.startsWith('refused')) return 'refused';
  return /time(d)? ?out/i.test(e) ? 'timeout' : 'network';
}

/**
 * The registry of one process: its own (not prom-client's global one), so several services in one test
 * process never share series. Served as text at /metrics.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly copy: CopyMetrics;
  private readonly webhookAttempts: Counter<'result'>;
  private readonly alertSends: Counter<'result'>;
  private sources: GaugeSources = {};

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.copy = new CopyMetrics(this.registry);
    this.webhookAttempts = new Counter({
      name: 'copytrade_webhook_attempts_total',
      help: 'Webhook delivery attempts by result (delivered, http_4xx, http_5xx, timeout, network, refused)',
      labelNames: ['result'],
      registers,
    });
    this.alertSends = new Counter({
      name: 'copytrade_alert_sends_total',
      help: 'Scheduled alert messages (email, Telegram) by result (sent, failed); tests not counted',
      labelNames: ['result'],
      registers,
    });
    const read = (f: (() => number) | undefined): number => {
      try {
        return f?.() ?? 0;
      } catch {
        return 0;
      }
    };
    const queue: Gauge = new Gauge({
      name: 'copytrade_copy_queue_depth',
      help: 'Copy writes handed to the dispatcher and not yet answered by the broker (waiting for a token included)',
      registers,
      collect: () => queue.set(read(this.sources.queueDepth)),
    });
    const panic: Gauge = new Gauge({
      name: 'copytrade_panic_close_jobs_running',
      help: 'Panic-close jobs this process is running',
      registers,
      collect: () => panic.set(read(this.sources.panicJobsRunning)),
    });
    const leases: Gauge = new Gauge({
      name: 'copytrade_leases_held',
      help: 'Broker-connection leases this process holds (0 where the process holds no broker connection)',
      registers,
      collect: () => leases.set(read(this.sources.leasesHeld)),
    });
  }

  /** Where the gauges read from, once the parts they read exist. */
  readFrom(sources: GaugeSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  readonly alertSend = (r: { ok: boolean }): void => {
    this.alertSends.inc({ result: r.ok ? 'sent' : 'failed' });
  };

  readonly webhookAttempt = (r: PostResult): void => {
    if (!r.aborted) this.webhookAttempts.inc({ result: webhookResult(r) });
  };

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
