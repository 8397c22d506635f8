import { eq } from 'drizzle-orm';
import type { Db } from '../db.js';
import { shadowTwins } from '../schema.js';

export type ShadowTwinRow = typeof shadowTwins.$inferSelect;

/** Which simulated twin a Slave copies onto while its shadow mode is on. */
export class ShadowTwinsRepo {
  constructor(private readonly db: Db) {}

  all(): Promise<ShadowTwinRow[]> {
    return this.db.select().from(shadowTwins);
  }

  async get(accountId: string): Promise<ShadowTwinRow | null> {
    const [r] = await this.db.select().from(shadowTwins).where(eq(shadowTwins.accountId, accountId)).limit(1);
    return r ?? null;
  }

  async upsert(row: {
    accountId: string;
    simAccountId: string;
    enabled: boolean;
    startBalance: string;
  }): Promise<ShadowTwinRow> {
    const now = new Date();
    const [r] = await this.db
      .insert(shadowTwins)
      .values({ ...row, updatedAt: now })
      .onConflictDoUpdate({
        target: shadowTwins.accountId,
        set: { simAccountId: row.simAccountId, enabled: row.enabled, startBalance: row.startBalance, updatedAt: now },
      })
      .returning();
    return r!;
  }
}
