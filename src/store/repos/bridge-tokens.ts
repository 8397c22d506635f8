import { asc, eq } from 'drizzle-orm';
import type { Db } from '../db.js';
import { bridgeTokens } from '../schema.js';

export interface BridgeTokenRow {
  id: string;
  accountId: string;
  hash: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** Terminal bridge tokens by hash and by account (auth/bridge-tokens.ts decides what is live). */
export class BridgeTokensRepo {
  constructor(private readonly db: Db) {}

  async insert(rec: BridgeTokenRow): Promise<void> {
    await this.db.insert(bridgeTokens).values(rec);
  }

  async byHash(hash: string): Promise<BridgeTokenRow | null> {
    const [r] = await this.db.select().from(bridgeTokens).where(eq(bridgeTokens.hash, hash)).limit(1);
    return r ?? null;
  }

  async byAccount(accountId: string): Promise<BridgeTokenRow[]> {
    return this.db
      .select()
      .from(bridgeTokens)
      .where(eq(bridgeTokens.accountId, accountId))
      .orderBy(asc(bridgeTokens.createdAt), asc(bridgeTokens.id));
  }

  async update(id: string, change: { expiresAt?: Date | null; revokedAt?: Date | null }): Promise<void> {
    await this.db.update(bridgeTokens).set(change).where(eq(bridgeTokens.id, id));
  }
}
