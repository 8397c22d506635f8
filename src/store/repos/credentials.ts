import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { accessTokens, apiKeys } from '../schema.js';
import { newId } from '../../domain/ids.js';

export interface ApiKeyRow {
  id: string;
  userId: string;
  name: string;
  displayPrefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  replacedBy: string | null;
  /** Dedicated limits the operator set (requests per window); null = the default. */
  rateLimitWrites: number | null;
  rateLimitReads: number | null;
}

export interface KeyLimits {
  writes: number | null;
  reads: number | null;
}

const keyColumns = {
  id: apiKeys.id,
  userId: apiKeys.userId,
  name: apiKeys.name,
  displayPrefix: apiKeys.displayPrefix,
  createdAt: apiKeys.createdAt,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
  lastUsedAt: apiKeys.lastUsedAt,
  replacedBy: apiKeys.replacedBy,
  rateLimitWrites: apiKeys.rateLimitWrites,
  rateLimitReads: apiKeys.rateLimitReads,
};

export interface LiveKey {
  id: string;
  userId: string;
  limits: KeyLimits;
  /**
   * The key whose rate budget this one spends: its successor while a rotated key works in its overlap, else
   * itself. A lineage has at most one such key (rotateApiKey ends older ones), so this is the lineage's head.
   */
  rateKey: string;
}

/** Access tokens and API keys: only hashes are stored. */
export class CredentialsRepo {
  /** Hash -> live key, only for the single-process embedded store; rotate and revoke clear it. */
  private readonly keyCache: Map<string, LiveKey & { expiresAt: Date | null }> | null;

  constructor(
    private readonly db: Db,
    opts: { cache?: boolean } = {},
  ) {
    this.keyCache = opts.cache ? new Map() : null;
  }

  async insertAccessToken(
    userId: string,
    tokenHash: string,
    expiresAt: Date,
  ): Promise<{ id: string; expiresAt: Date }> {
    const id = newId('tok');
    await this.db.insert(accessTokens).values({ id, userId, tokenHash, expiresAt });
    return { id, expiresAt };
  }

  /** The live token with this hash (not expired, not revoked). */
  async liveAccessToken(tokenHash: string, now = new Date()): Promise<{ id: string; userId: string } | null> {
    const [row] = await this.db
      .select({ id: accessTokens.id, userId: accessTokens.userId })
      .from(accessTokens)
      .where(
        and(eq(accessTokens.tokenHash, tokenHash), isNull(accessTokens.revokedAt), gt(accessTokens.expiresAt, now)),
      )
      .limit(1);
    return row ?? null;
  }

  async revokeAccessToken(id: string, userId: string): Promise<boolean> {
    const rows = await this.db
      .update(accessTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(accessTokens.id, id), eq(accessTokens.userId, userId), isNull(accessTokens.revokedAt)))
      .returning({ id: accessTokens.id });
    return rows.length > 0;
  }

  async insertApiKey(userId: string, name: string, displayPrefix: string, keyHash: string): Promise<ApiKeyRow> {
    const [row] = await this.db
      .insert(apiKeys)
      .values({ id: newId('key'), userId, name, displayPrefix, keyHash })
      .returning(keyColumns);
    return row!;
  }

  /** The usable key with this hash: not revoked and, if rotated, still inside its overlap window. */
  async liveApiKey(keyHash: string, now = new Date()): Promise<LiveKey | null> {
    const hit = this.keyCache?.get(keyHash);
    if (hit) {
      const { expiresAt, ...live } = hit;
      return expiresAt && expiresAt <= now ? null : live;
    }
    const [row] = await this.db
      .select({
        id: apiKeys.id,
        userId: apiKeys.userId,
        expiresAt: apiKeys.expiresAt,
        writes: apiKeys.rateLimitWrites,
        reads: apiKeys.rateLimitReads,
        replacedBy: apiKeys.replacedBy,
      })
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.keyHash, keyHash),
          isNull(apiKeys.revokedAt),
          or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
        ),
      )
      .limit(1);
    if (!row) return null;
    const live = {
      id: row.id,
      userId: row.userId,
      limits: { writes: row.writes, reads: row.reads },
      rateKey: row.replacedBy ?? row.id,
    };
    this.keyCache?.set(keyHash, { ...live, expiresAt: row.expiresAt });
    return live;
  }

  /** The operator's dedicated limits for one key (null = back to the default); any user's key. */
  async setApiKeyLimits(id: string, limits: Partial<KeyLimits>): Promise<ApiKeyRow | null> {
    this.keyCache?.clear();
    const set: Partial<typeof apiKeys.$inferInsert> = {};
    if (limits.writes !== undefined) set.rateLimitWrites = limits.writes;
    if (limits.reads !== undefined) set.rateLimitReads = limits.reads;
    if (Object.keys(set).length === 0) {
      const [row] = await this.db.select(keyColumns).from(apiKeys).where(eq(apiKeys.id, id)).limit(1);
      return row ?? null;
    }
    const [row] = await this.db.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning(keyColumns);
    return row ?? null;
  }

  /** Newest first, by id (its leading time part); `after` = the last id of the previous page. */
  async listApiKeys(userId: string, page: { after?: string | undefined; limit?: number } = {}): Promise<ApiKeyRow[]> {
    const q = this.db
      .select(keyColumns)
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, userId), page.after ? lt(apiKeys.id, page.after) : undefined))
      .orderBy(desc(apiKeys.id));
    return page.limit ? q.limit(page.limit) : q;
  }

  /**
   * Keys that count toward the quota: every key that works, i.e. not revoked and not expired, a rotated key
   * inside its overlap window too (else a chain of rotations would hold any number of working keys).
   */
  async countActiveApiKeys(userId: string, now = new Date()): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.userId, userId),
          isNull(apiKeys.revokedAt),
          or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
        ),
      );
    return Number(r?.n ?? 0);
  }

  async apiKey(userId: string, id: string): Promise<ApiKeyRow | null> {
    const [row] = await this.db
      .select(keyColumns)
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)))
      .limit(1);
    return row ?? null;
  }

  /**
   * New key replaces the old one; the old keeps working until `overlapUntil`. One transaction. A key already
   * replaced is not rotated again (null, as for an unknown key: rotate its replacement), and the old key's own predecessor
   * stops now, so a lineage never has more than one key in its overlap.
   */
  async rotateApiKey(
    userId: string,
    oldId: string,
    overlapUntil: Date,
    displayPrefix: string,
    keyHash: string,
    now = new Date(),
  ): Promise<ApiKeyRow | null> {
    this.keyCache?.clear();
    return this.db.transaction(async (tx) => {
      const [old] = await tx
        .select(keyColumns)
        .from(apiKeys)
        .where(and(eq(apiKeys.id, oldId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
        .limit(1)
        .for('update');
      if (!old || old.replacedBy) return null;
      await tx
        .update(apiKeys)
        .set({ expiresAt: now })
        .where(
          and(
            eq(apiKeys.replacedBy, oldId),
            isNull(apiKeys.revokedAt),
            or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
          ),
        );
      // The replacement keeps the operator's dedicated limits: rotating a key is not a way to lose (or reset) them.
      const [fresh] = await tx
        .insert(apiKeys)
        .values({
          id: newId('key'),
          userId,
          name: old.name,
          displayPrefix,
          keyHash,
          rateLimitWrites: old.rateLimitWrites,
          rateLimitReads: old.rateLimitReads,
        })
        .returning(keyColumns);
      // Never extend an already shorter window: rotating twice must not revive an old key's lifetime.
      const until = old.expiresAt && old.expiresAt < overlapUntil ? old.expiresAt : overlapUntil;
      await tx.update(apiKeys).set({ expiresAt: until, replacedBy: fresh!.id }).where(eq(apiKeys.id, oldId));
      return fresh!;
    });
  }

  /** Revokes the key and any key it replaced that is still in its overlap: revoking ends the whole lineage. */
  async revokeApiKey(userId: string, id: string): Promise<boolean> {
    this.keyCache?.clear();
    const now = new Date();
    return this.db.transaction(async (tx) => {
      const rows = await tx
        .update(apiKeys)
        .set({ revokedAt: now })
        .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
        .returning({ id: apiKeys.id });
      if (rows.length === 0) return false;
      await tx
        .update(apiKeys)
        .set({ revokedAt: now })
        .where(and(eq(apiKeys.replacedBy, id), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
      return true;
    });
  }

  /** Revokes every key of the user that is not revoked yet (a password change or reset that asks for it). */
  async revokeAllApiKeys(userId: string, now = new Date()): Promise<number> {
    this.keyCache?.clear();
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(
        and(
          eq(apiKeys.userId, userId),
          isNull(apiKeys.revokedAt),
          or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)),
        ),
      )
      .returning({ id: apiKeys.id });
    return rows.length;
  }

  /** Last-used stamps are best effort and coarse (once a minute) so reads do not turn into writes. */
  async touchApiKey(id: string): Promise<void> {
    await this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date() })
      .where(
        and(
          eq(apiKeys.id, id),
          or(isNull(apiKeys.lastUsedAt), sql`${apiKeys.lastUsedAt} < now() - interval '1 minute'`),
        ),
      );
  }
}
