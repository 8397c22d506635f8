import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { alertChannels, alertDeliveries, alertRules, events } from '../schema.js';
import { newId } from '../../domain/ids.js';

export type AlertChannelRow = typeof alertChannels.$inferSelect;
export type AlertDeliveryRow = typeof alertDeliveries.$inferSelect;
export type NewAlertDelivery = Omit<typeof alertDeliveries.$inferInsert, 'id' | 'createdAt'>;

/** Attempt number of a test send: outside the scheduled sequence of a message (as MANUAL_ATTEMPT of webhooks). */
export const TEST_ATTEMPT = 0;

/** Alert channels, rules and deliveries. Every query a caller reaches is scoped by user id. */
export class AlertsRepo {
  constructor(private readonly db: Db) {}

  async insert(row: typeof alertChannels.$inferInsert): Promise<AlertChannelRow> {
    const [r] = await this.db.insert(alertChannels).values(row).returning();
    return r!;
  }

  list(userId: string): Promise<AlertChannelRow[]> {
    return this.db.select().from(alertChannels).where(eq(alertChannels.userId, userId)).orderBy(alertChannels.id);
  }

  async count(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(alertChannels)
      .where(eq(alertChannels.userId, userId));
    return Number(r?.n ?? 0);
  }

  async owned(userId: string, id: string): Promise<AlertChannelRow | null> {
    const [r] = await this.db
      .select()
      .from(alertChannels)
      .where(and(eq(alertChannels.userId, userId), eq(alertChannels.id, id)))
      .limit(1);
    return r ?? null;
  }

  /** Enabled channels, of one user or of everyone (the dispatcher's sweep). */
  enabled(userId?: string): Promise<AlertChannelRow[]> {
    const cond = userId
      ? and(eq(alertChannels.enabled, true), eq(alertChannels.userId, userId))
      : eq(alertChannels.enabled, true);
    return this.db.select().from(alertChannels).where(cond);
  }

  /** A user's change; re-enabling or a new address also cancels a pending backoff (tried at the next pass). */
  async update(
    userId: string,
    id: string,
    patch: Partial<typeof alertChannels.$inferInsert>,
  ): Promise<AlertChannelRow | null> {
    const [r] = await this.db
      .update(alertChannels)
      .set({ ...patch, updatedAt: new Date() })
      .where(and(eq(alertChannels.userId, userId), eq(alertChannels.id, id)))
      .returning();
    return r ?? null;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const r = await this.db
      .delete(alertChannels)
      .where(and(eq(alertChannels.userId, userId), eq(alertChannels.id, id)))
      .returning({ id: alertChannels.id });
    return r.length > 0;
  }

  /**
   * The dispatcher's move of a channel's state, only from the cursor it read (compare-and-set: a second process
   * that moved it first wins, and this one's attempt row is still written).
   */
  async advance(
    id: string,
    from: number,
    state: Partial<
      Pick<AlertChannelRow, 'deliveredCursor' | 'pendingSince' | 'lastSentAt' | 'failures' | 'nextAttemptAt'>
    >,
    attempt?: NewAlertDelivery,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      if (attempt) await tx.insert(alertDeliveries).values({ ...attempt, id: newId('ald') });
      const r = await tx
        .update(alertChannels)
        .set(state)
        .where(and(eq(alertChannels.id, id), eq(alertChannels.deliveredCursor, from)))
        .returning({ id: alertChannels.id });
      return r.length > 0;
    });
  }

  async recordAttempt(attempt: NewAlertDelivery): Promise<AlertDeliveryRow> {
    const [r] = await this.db
      .insert(alertDeliveries)
      .values({ ...attempt, id: newId('ald') })
      .returning();
    return r!;
  }

  /** Newest first; `before` is a delivery id from a previous page. */
  deliveries(channelId: string, limit: number, before?: string): Promise<AlertDeliveryRow[]> {
    const cond = before
      ? and(eq(alertDeliveries.channelId, channelId), lt(alertDeliveries.id, before))
      : eq(alertDeliveries.channelId, channelId);
    return this.db.select().from(alertDeliveries).where(cond).orderBy(desc(alertDeliveries.id)).limit(limit);
  }

  /** The user's rule rows (kinds without a row take their default). */
  rules(userId: string): Promise<Array<{ kind: string; enabled: boolean }>> {
    return this.db
      .select({ kind: alertRules.kind, enabled: alertRules.enabled })
      .from(alertRules)
      .where(eq(alertRules.userId, userId));
  }

  async setRules(userId: string, rules: Array<{ kind: string; enabled: boolean }>): Promise<void> {
    if (rules.length === 0) return;
    const now = new Date();
    await this.db
      .insert(alertRules)
      .values(rules.map((r) => ({ userId, kind: r.kind, enabled: r.enabled, updatedAt: now })))
      .onConflictDoUpdate({
        target: [alertRules.userId, alertRules.kind],
        set: { enabled: sql`excluded.enabled`, updatedAt: now },
      });
  }

  /** Where a new channel starts: after the user's latest event (it alerts on what happens from now on). */
  async latestCursor(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ c: sql<number | null>`max(${events.cursor})` })
      .from(events)
      .where(and(eq(events.userId, userId), gt(events.cursor, 0)));
    return Number(r?.c ?? 0);
  }
}
