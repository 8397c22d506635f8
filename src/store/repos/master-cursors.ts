import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { masterCursors } from '../schema.js';

/** How far each Master's deal history has been replayed (see `master_cursors` in schema.ts). */
export class MasterCursorsRepo {
  constructor(private readonly db: Db) {}

  async dealsAt(accountId: string): Promise<Date | null> {
    const [r] = await this.db
      .select({ at: masterCursors.dealsAt })
      .from(masterCursors)
      .where(eq(masterCursors.accountId, accountId))
      .limit(1);
    return r?.at ?? null;
  }

  /** Moves the cursor to `at`, never back: two owners of one Master (a paused one and its successor) cannot undo each other. */
  async advance(accountId: string, at: Date): Promise<void> {
    await this.db
      .insert(masterCursors)
      .values({ accountId, dealsAt: at, updatedAt: new Date() })
      .onConflictDoUpdate({
        target: masterCursors.accountId,
        set: {
          dealsAt: sql`greatest(${masterCursors.dealsAt}, excluded.deals_at)`,
          updatedAt: sql`excluded.updated_at`,
        },
      });
  }
}
