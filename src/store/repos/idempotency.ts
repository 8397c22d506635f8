import { and, eq, isNull, lt, ne, or } from 'drizzle-orm';
import type { Db } from '../db.js';
import { idempotencyKeys } from '../schema.js';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

export interface StoredResponse {
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Idempotency-Key records. `claim` inserts first and lets the primary key (user, key) decide who owns a key:
 * of two simultaneous requests exactly one insert succeeds, on PGlite and PostgreSQL alike, with no lock
 * held across the handler.
 */
export class IdempotencyRepo {
  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
  ) {}

  async claim(
    userId: string,
    key: string,
    route: string,
    bodyDigest: string,
    by: { requestId: string; claimedBy: string },
  ): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRow }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const [mine] = await this.db
        .insert(idempotencyKeys)
        .values({ userId, key, route, bodyDigest, ...by })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });
      if (mine) return { claimed: true };
      const [existing] = await this.db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)))
        .limit(1);
      if (!existing) continue; // deleted between our insert and read: try once more
      if (existing.createdAt.getTime() > Date.now() - this.ttlMs) return { claimed: false, existing };
      // Expired: only the request that deletes this exact row may take the key over.
      await this.db
        .delete(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.userId, userId),
            eq(idempotencyKeys.key, key),
            eq(idempotencyKeys.createdAt, existing.createdAt),
          ),
        );
    }
    const [existing] = await this.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)))
      .limit(1);
    if (existing) return { claimed: false, existing };
    throw new Error('idempotency key could not be claimed');
  }

  async complete(userId: string, key: string, status: number, response: StoredResponse): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ status, response })
      .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)));
  }

  /** Gives the key back: the request did nothing a retry could duplicate. */
  async release(userId: string, key: string): Promise<void> {
    await this.db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)));
  }

  /** Keys still in flight that another process (or an earlier run of this one) claimed before `before`. */
  async inFlight(before: Date, notClaimedBy: string): Promise<IdempotencyRow[]> {
    return this.db
      .select()
      .from(idempotencyKeys)
      .where(
        and(
          isNull(idempotencyKeys.status),
          lt(idempotencyKeys.createdAt, before),
          or(isNull(idempotencyKeys.claimedBy), ne(idempotencyKeys.claimedBy, notClaimedBy)),
        ),
      );
  }

  /** Stores the answer of a key left in flight, unless it was settled meanwhile. */
  async settle(row: IdempotencyRow, status: number, response: StoredResponse): Promise<void> {
    await this.db
      .update(idempotencyKeys)
      .set({ status, response })
      .where(
        and(
          eq(idempotencyKeys.userId, row.userId),
          eq(idempotencyKeys.key, row.key),
          eq(idempotencyKeys.createdAt, row.createdAt),
          isNull(idempotencyKeys.status),
        ),
      );
  }

  /** Frees a key left in flight (nothing was done that a retry could duplicate), unless it was settled meanwhile. */
  async free(row: IdempotencyRow): Promise<void> {
    await this.db
      .delete(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.userId, row.userId),
          eq(idempotencyKeys.key, row.key),
          eq(idempotencyKeys.createdAt, row.createdAt),
          isNull(idempotencyKeys.status),
        ),
      );
  }

  async purgeExpired(): Promise<void> {
    await this.db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, new Date(Date.now() - this.ttlMs)));
  }
}
