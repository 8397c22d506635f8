import { and, desc, eq, getTableColumns, gte, lt, sql } from 'drizzle-orm';
import { olderThan, positionOf } from './keyset.js';
import type { Db } from '../db.js';
import { pgArray } from '../pg-array.js';
import { rateLimitHits, requestRecords } from '../schema.js';
import { newId } from '../../domain/ids.js';

export type RequestRecordRow = typeof requestRecords.$inferSelect;
export type NewRequestRecord = typeof requestRecords.$inferInsert;

export class RequestsRepo {
  private buffer: NewRequestRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly flushMs = 100,
    private readonly maxBatch = 500,
  ) {}

  async record(r: NewRequestRecord): Promise<void> {
    await this.db.insert(requestRecords).values(r);
  }

  /**
   * Buffered record: one multi-row insert per `flushMs`, so recording every read does not cost a commit
   * (and an fsync) per request. What matters for reconciling an order (its trade, intents and request id) is
   * written synchronously by the engine; the buffer is flushed on shutdown.
   */
  enqueue(r: NewRequestRecord, onError: (err: unknown) => void): void {
    this.buffer.push(r);
    if (this.buffer.length >= this.maxBatch) void this.flush().catch(onError);
    else if (!this.timer) this.timer = setTimeout(() => void this.flush().catch(onError), this.flushMs);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer;
    this.buffer = [];
    const run = this.flushing.then(async () => {
      if (batch.length > 0) await this.insertBatch(batch);
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /**
   * One statement with twelve array parameters, whatever the batch size: at thousands of reads a second the
   * query builder's per-value work on a multi-row VALUES was most of what recording cost.
   */
  private async insertBatch(batch: NewRequestRecord[]): Promise<void> {
    const col = <T>(f: (r: NewRequestRecord) => T | null | undefined) =>
      pgArray(batch.map((r) => (f(r) ?? null) as never));
    await this.db.execute(sql`
      insert into ${requestRecords} (id, user_id, credential_kind, credential_id, method, route, path, status,
        body_digest, response, duration_ms, idempotency_key)
      select * from unnest(${col((r) => r.id)}::text[], ${col((r) => r.userId)}::text[],
        ${col((r) => r.credentialKind)}::text[], ${col((r) => r.credentialId)}::text[], ${col((r) => r.method)}::text[],
        ${col((r) => r.route)}::text[], ${col((r) => r.path)}::text[], ${col((r) => r.status)}::int[],
        ${col((r) => r.bodyDigest)}::text[],
        ${col((r) => (r.response === null || r.response === undefined ? null : JSON.stringify(r.response)))}::jsonb[],
        ${col((r) => r.durationMs)}::numeric[], ${col((r) => r.idempotencyKey)}::text[])`);
  }

  async list(
    userId: string,
    opts: { before?: Date; after?: string | undefined; limit: number },
  ): Promise<Array<RequestRecordRow & { position: string }>> {
    await this.flush();
    const conds = [eq(requestRecords.userId, userId)];
    if (opts.before) conds.push(lt(requestRecords.createdAt, opts.before));
    if (opts.after) conds.push(olderThan(requestRecords.createdAt, requestRecords.id, opts.after));
    return this.db
      .select({ ...getTableColumns(requestRecords), position: positionOf(requestRecords.createdAt, requestRecords.id) })
      .from(requestRecords)
      .where(and(...conds))
      .orderBy(desc(requestRecords.createdAt), desc(requestRecords.id))
      .limit(opts.limit);
  }

  async byId(userId: string, id: string): Promise<RequestRecordRow | null> {
    const [row] = await this.db
      .select()
      .from(requestRecords)
      .where(and(eq(requestRecords.id, id), eq(requestRecords.userId, userId)))
      .limit(1);
    return row ?? null;
  }

  /**
   * Sliding-window limit kept in the store, so it holds across restarts and API processes. Counts the hit
   * only when allowed; returns the seconds until the oldest hit in the window leaves it.
   */
  async hit(
    bucket: string,
    limit: number,
    windowMs: number,
    now = new Date(),
  ): Promise<{ allowed: boolean; retryAfterSec: number }> {
    return this.db.transaction(async (tx) => {
      // Serialise hits on one bucket; the advisory lock is released with the transaction.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${bucket}))`);
      const since = new Date(now.getTime() - windowMs);
      const hits = await tx
        .select({ at: rateLimitHits.at })
        .from(rateLimitHits)
        .where(and(eq(rateLimitHits.bucket, bucket), gte(rateLimitHits.at, since)))
        .orderBy(rateLimitHits.at);
      if (hits.length >= limit) {
        const oldest = hits[hits.length - limit]!.at.getTime();
        return { allowed: false, retryAfterSec: Math.max(1, Math.ceil((oldest + windowMs - now.getTime()) / 1000)) };
      }
      await tx.insert(rateLimitHits).values({ id: newId('req'), bucket, at: now });
      await tx.delete(rateLimitHits).where(and(eq(rateLimitHits.bucket, bucket), lt(rateLimitHits.at, since)));
      return { allowed: true, retryAfterSec: 0 };
    });
  }
}
