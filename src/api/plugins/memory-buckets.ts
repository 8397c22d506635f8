import type { BucketPolicy, BucketState } from '../../store/repos/rate-buckets.js';

/**
 * The same token buckets in this process's memory, for the embedded store: its lock file makes this the only
 * process serving it, so memory is exact there and spares every request a statement on PGlite's one connection
 * (measured: the store statement halved the embedded store's req/s on a cheap read). A restart refills them.
 */
export class MemoryBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  async take(bucket: string, p: BucketPolicy, cost = 1): Promise<BucketState> {
    return this.takeNow(bucket, p, cost);
  }

  /** take() without the promise: the limiter runs on every request of family V (issue 12). */
  takeNow(bucket: string, p: BucketPolicy, cost = 1): BucketState {
    const now = this.now();
    const b = this.buckets.get(bucket);
    const tokens = b
      ? Math.min(p.quota, b.tokens + (Math.max(0, now - b.at) / 1000) * (p.quota / p.windowSec))
      : p.quota;
    if (tokens < cost) return { allowed: false, tokens };
    this.buckets.set(bucket, { tokens: tokens - cost, at: now });
    return { allowed: true, tokens: tokens - cost };
  }

  async purgeIdle(olderThan: Date): Promise<void> {
    for (const [k, b] of this.buckets) if (b.at < olderThan.getTime()) this.buckets.delete(k);
  }
}
