import type { Decimal } from '../domain/decimal.js';
import type { BrokerAdapter, OrderOutcome, PlaceOrderRequest } from '../platforms/adapter.js';
import { ThroughputMeter } from './admission-rate.js';
import { TokenBucket } from './token-bucket.js';

/**
 * Sends writes to brokers: one token bucket per account connection, every account in parallel, so no Slave
 * waits for another's broker. Never retries: the caller decides from the outcome (and an unresolved outcome
 * is settled by lookup, not by resending).
 */
const UNPACED: Pacer = { tryTake: () => true, take: () => Promise.resolve() };

interface Pacer {
  tryTake(): boolean;
  take(): Promise<void>;
}

export class Dispatcher {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Writes per account handed to the dispatcher and not yet answered (waiting for a token included). */
  private readonly writing = new Map<string, number>();
  private readonly meter = new ThroughputMeter();
  /** When each connection last answered anything (Date.now): the health monitor's proof of life. */
  private readonly answers = new Map<string, number>();

  private bucket(accountId: string, adapter: BrokerAdapter): Pacer {
    // An adapter that paces itself by the broker's served limits would only be slowed by a guess on top.
    if (adapter.capabilities.selfPaced) return UNPACED;
    let b = this.buckets.get(accountId);
    if (!b) {
      b = new TokenBucket(adapter.capabilities.rateLimitPerSecond);
      this.buckets.set(accountId, b);
    }
    return b;
  }

  place(accountId: string, adapter: BrokerAdapter, req: PlaceOrderRequest): Promise<OrderOutcome> {
    return this.run(accountId, adapter, () => adapter.placeOrder(req));
  }

  close(accountId: string, adapter: BrokerAdapter, positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    return this.run(accountId, adapter, () =>
      volume === undefined ? adapter.closePosition(positionId) : adapter.closePosition(positionId, volume),
    );
  }

  /** Any other broker call (reads included) paced by the same bucket as the account's writes. */
  async run<T>(accountId: string, adapter: BrokerAdapter, call: () => Promise<T>): Promise<T> {
    this.writing.set(accountId, (this.writing.get(accountId) ?? 0) + 1);
    try {
      const pacer = this.bucket(accountId, adapter);
      if (!pacer.tryTake()) await pacer.take();
      const result = await call();
      if (isAnswer(result)) this.answers.set(accountId, Date.now());
      return result;
    } finally {
      const n = (this.writing.get(accountId) ?? 1) - 1;
      if (n <= 0) this.writing.delete(accountId);
      else this.writing.set(accountId, n);
      this.meter.answered(accountId, Math.max(0, n));
    }
  }

  /**
   * What admission control needs of one connection: the writes handed out and not answered, and the pace they
   * drain at: the pacer's figure (the adapter's own where it paces itself), or the measured one when lower.
   */
  load(accountId: string, adapter: BrokerAdapter): { queued: number; ratePerSec: number } {
    const paced = adapter.writeRatePerSecond?.() ?? adapter.capabilities.rateLimitPerSecond;
    const seen = this.meter.ratePerSec(accountId);
    return { queued: this.writing.get(accountId) ?? 0, ratePerSec: seen === null ? paced : Math.min(paced, seen) };
  }

  /** Writes queued or on the wire, every account together (the queue-depth gauge). */
  queued(): number {
    let n = 0;
    for (const c of this.writing.values()) n += c;
    return n;
  }

  /** When this connection last gave the broker's answer to a call (confirmed or refused, not unknown or never sent). */
  lastAnswerAt(accountId: string): number | undefined {
    return this.answers.get(accountId);
  }

  /** True while copies to this account are queued or on the wire: its connection's budget belongs to them. */
  busy(accountId: string): boolean {
    return this.writing.has(accountId);
  }

  /** Keeps background work visible so shutdown can wait for it instead of cutting a write in half. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}

/** An order outcome proves the broker answered only when it is the broker's verdict; any other value came from it. */
function isAnswer(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || !('kind' in result)) return true;
  const kind = (result as { kind: unknown }).kind;
  return kind !== 'unresolved' && kind !== 'denied';
}
