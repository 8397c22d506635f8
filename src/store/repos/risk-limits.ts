import { asc, eq } from 'drizzle-orm';
import type { Db } from '../db.js';
import { riskLimits } from '../schema.js';

export interface RiskRow<L = unknown, S = unknown> {
  targetId: string;
  userId: string;
  scope: 'account' | 'group';
  limits: L;
  state: S;
  updatedAt: Date;
}

const toRow = <L, S>(r: typeof riskLimits.$inferSelect): RiskRow<L, S> => ({
  targetId: r.targetId,
  userId: r.userId,
  scope: r.scope as 'account' | 'group',
  limits: r.limits as L,
  state: r.state as S,
  updatedAt: r.updatedAt,
});

/** Risk limits per account or group, and the monitor's state per account (peak equity, day start). */
export class RiskLimitsRepo {
  constructor(private readonly db: Db) {}

  async all<L, S>(): Promise<Array<RiskRow<L, S>>> {
    return (await this.db.select().from(riskLimits).orderBy(asc(riskLimits.createdAt))).map((r) => toRow<L, S>(r));
  }

  async get<L, S>(targetId: string): Promise<RiskRow<L, S> | null> {
    const [r] = await this.db.select().from(riskLimits).where(eq(riskLimits.targetId, targetId)).limit(1);
    return r ? toRow<L, S>(r) : null;
  }

  async upsert(row: Omit<RiskRow, 'updatedAt'>): Promise<void> {
    const now = new Date();
    await this.db
      .insert(riskLimits)
      .values({ ...row, updatedAt: now })
      .onConflictDoUpdate({
        target: riskLimits.targetId,
        set: { limits: row.limits, state: row.state, updatedAt: now },
      });
  }

  async setState(targetId: string, state: unknown): Promise<void> {
    await this.db.update(riskLimits).set({ state, updatedAt: new Date() }).where(eq(riskLimits.targetId, targetId));
  }
}
