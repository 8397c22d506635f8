import type { RateLimitRule } from './parse.js';

/**
 * Client-side pacing so we stay under the limits the server publishes in /trade/config instead of
 * discovering them by 429s. One bucket per route type per connection. The sizes keep any window of the
 * served interval at or below ~90% of the limit: burst (30%) + refill over the interval (60%).
 */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private blockedUntil = 0;

  constructor(
    readonly capacity: number,
    /** Tokens per millisecond. */
    readonly refillPerMs: number,
  ) {
    this.tokens = capacity;
  }

  static forRule(rule: RateLimitRule): TokenBucket {
    const capacity = Math.max(1, Math.floor(rule.limit * 0.3));
    const perInterval = Math.max(rule.limit * 0.6, Math.min(1, rule.limit * 0.9));
    return new TokenBucket(capacity, perInterval / rule.intervalMs);
  }

  /** Milliseconds until a token is free (0 = take it now). Takes the token when free. */
  tryTake(now = Date.now()): number {
    this.refill(now);
    if (now < this.blockedUntil) return this.blockedUntil - now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / this.refillPerMs);
  }

  /** After a 429 the server's Retry-After wins over our estimate. */
  block(ms: number, now = Date.now()): void {
    this.blockedUntil = Math.max(this.blockedUntil, now + ms);
    this.tokens = 0;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.last) * this.refillPerMs);
    this.last = now;
  }
}

export class RatePacer {
  private buckets = new Map<string, TokenBucket>();

  /** Replaces the buckets from a freshly read /trade/config. */
  configure(rules: RateLimitRule[]): void {
    const next = new Map<string, TokenBucket>();
    for (const r of rules) next.set(r.rateLimitType, TokenBucket.forRule(r));
    this.buckets = next;
  }

  /** Smallest interval (ms) between two calls of a type that stays inside its steady rate. */
  minSpacingMs(type: string): number {
    const b = this.buckets.get(type);
    return b ? Math.ceil(1 / b.refillPerMs) : 0;
  }

  async take(type: string | null, signal?: { closed: boolean }): Promise<void> {
    const b = type ? this.buckets.get(type) : undefined;
    if (!b) return;
    for (;;) {
      if (signal?.closed) return;
      const wait = b.tryTake();
      if (wait === 0) return;
      await new Promise((r) => setTimeout(r, Math.min(wait, 1000)));
    }
  }

  block(type: string | null, seconds: number): void {
    const b = type ? this.buckets.get(type) : undefined;
    b?.block(seconds * 1000);
  }
}
