import { lt, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { rateBuckets } from '../schema.js';
import { rowsOf } from '../rows-of.js';

export interface BucketPolicy {
  /** Tokens a full bucket holds (the burst), refilled evenly over `windowSec`. */
  quota: number;
  windowSec: number;
}

export interface BucketState {
  allowed: boolean;
  /** Tokens left after this request (fractional: the refill is continuous). */
  tokens: number;
}

/**
 * Token buckets kept in the store, so every API process on one database draws from the same bucket. One
 * statement per request: the upsert refills from the database clock (one clock for all processes) and takes
 * `cost` tokens only when that many are there; the row lock of the upsert orders concurrent takers. A refusal
 * leaves the row untouched (no row returned), and a second read says how far the bucket is from `cost`.
 */
export class RateBucketsRepo {
  constructor(private readonly db: Db) {}

  async take(bucket: string, p: BucketPolicy, cost = 1): Promise<BucketState> {
    const rate = p.quota / p.windowSec;
    const refilled = sql`least(${p.quota}::float8, ${rateBuckets.tokens} + greatest(0, extract(epoch from clock_timestamp() - ${rateBuckets.updatedAt}))::float8 * ${rate}::float8)`;
    const taken = rowsOf<Record<string, unknown>>(
      await this.db.execute(sql`
      insert into rate_buckets as b (bucket, tokens, updated_at) values (${bucket}, ${p.quota - cost}::float8, clock_timestamp())
      on conflict (bucket) do update set tokens = least(${p.quota}::float8, b.tokens + greatest(0, extract(epoch from clock_timestamp() - b.updated_at))::float8 * ${rate}::float8) - ${cost}::float8,
        updated_at = clock_timestamp()
      where least(${p.quota}::float8, b.tokens + greatest(0, extract(epoch from clock_timestamp() - b.updated_at))::float8 * ${rate}::float8) >= ${cost}::float8
      returning tokens`),
    );
    if (taken.length > 0) return { allowed: true, tokens: Number(taken[0]!.tokens) };
    const [row] = await this.db
      .select({ tokens: sql<number>`${refilled}` })
      .from(rateBuckets)
      .where(sql`${rateBuckets.bucket} = ${bucket}`);
    return { allowed: false, tokens: Number(row?.tokens ?? 0) };
  }

  /** Buckets untouched for longer than any window are full anyway: dropping them changes nothing. */
  async purgeIdle(olderThan: Date): Promise<void> {
    await this.db.delete(rateBuckets).where(lt(rateBuckets.updatedAt, olderThan));
  }
}
