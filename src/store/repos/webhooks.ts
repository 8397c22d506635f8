import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import type { EventsRepo, NewEvent } from './events.js';
import { events, webhookAttempts, webhookEndpoints } from '../schema.js';
import { newId } from '../../domain/ids.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type NewAttempt = Omit<typeof webhookAttempts.$inferInsert, 'id' | 'createdAt'>;

/** Attempt number of a manual send (test event, redelivery): outside the scheduled sequence of an event. */
export const MANUAL_ATTEMPT = 0;

/** Endpoints and their delivery attempts. Every query that a caller reaches is scoped by user id. */
export class WebhookRepo {
  constructor(
    private readonly db: Db,
    private readonly events: EventsRepo,
  ) {}

  async insert(row: typeof webhookEndpoints.$inferInsert): Promise<EndpointRow> {
    const [r] = await this.db.insert(webhookEndpoints).values(row).returning();
    return r!;
  }

  /** Oldest first, by id (its leading time part); `after` = the last id of the previous page. */
  async list(userId: string, page: { after?: string | undefined; limit?: number } = {}): Promise<EndpointRow[]> {
    const q = this.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.userId, userId), page.after ? gt(webhookEndpoints.id, page.after) : undefined))
      .orderBy(webhookEndpoints.id);
    return page.limit ? q.limit(page.limit) : q;
  }

  async count(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.userId, userId));
    return Number(r?.n ?? 0);
  }

  async owned(userId: string, id: string): Promise<EndpointRow | null> {
    const [r] = await this.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.userId, userId), eq(webhookEndpoints.id, id)))
      .limit(1);
    return r ?? null;
  }

  async byId(id: string): Promise<EndpointRow | null> {
    const [r] = await this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).limit(1);
    return r ?? null;
  }

  enabledIds(userId?: string): Promise<Array<{ id: string }>> {
    const cond = userId
      ? and(eq(webhookEndpoints.enabled, true), eq(webhookEndpoints.userId, userId))
      : eq(webhookEndpoints.enabled, true);
    return this.db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(cond);
  }

  /** A user's change; it stamps updatedAt, which also cancels a pending backoff (see Deliverer). */
  async update(
    userId: string,
    id: string,
    patch: Partial<typeof webhookEndpoints.$inferInsert>,
  ): Promise<EndpointRow | null> {
    const [r] = await this.db
      .update(webhookEndpoints)
      .set({ ...patch, updatedAt: new Date() })
      .where(and(eq(webhookEndpoints.userId, userId), eq(webhookEndpoints.id, id)))
      .returning();
    return r ?? null;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const r = await this.db
      .delete(webhookEndpoints)
      .where(and(eq(webhookEndpoints.userId, userId), eq(webhookEndpoints.id, id)))
      .returning({ id: webhookEndpoints.id });
    return r.length > 0;
  }

  /** Moves the cursor past events the endpoint does not subscribe to; only from where the caller read it. */
  async skipTo(id: string, from: number, to: number): Promise<void> {
    await this.db
      .update(webhookEndpoints)
      .set({ deliveredCursor: to })
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.deliveredCursor, from)));
  }

  /** The attempt and the cursor move commit together: a crash leaves either both or neither. */
  async delivered(id: string, from: number, to: number, attempt: NewAttempt): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ ...attempt, id: newId('wha') });
      await tx
        .update(webhookEndpoints)
        .set({ deliveredCursor: to, failingSince: null })
        .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.deliveredCursor, from)));
    });
  }

  async failed(id: string, failingSince: Date, attempt: NewAttempt): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ ...attempt, id: newId('wha') });
      await tx
        .update(webhookEndpoints)
        .set({ failingSince })
        .where(and(eq(webhookEndpoints.id, id), sql`${webhookEndpoints.failingSince} is null`));
    });
  }

  /** Disables the endpoint and writes the event that says so, in one transaction; returns false if already disabled. */
  async disable(ep: EndpointRow, reason: string, attempt: NewAttempt | null, event: NewEvent): Promise<boolean> {
    const done = await this.db.transaction(async (tx) => {
      if (attempt) await tx.insert(webhookAttempts).values({ ...attempt, id: newId('wha') });
      const r = await tx
        .update(webhookEndpoints)
        .set({ enabled: false, disabledReason: reason })
        .where(and(eq(webhookEndpoints.id, ep.id), eq(webhookEndpoints.enabled, true)))
        .returning({ id: webhookEndpoints.id });
      if (r.length === 0) return false;
      await this.events.append(tx, [event]);
      return true;
    });
    if (done) this.events.notify([ep.userId]);
    return done;
  }

  async latestCursor(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ c: sql<number | null>`max(${events.cursor})` })
      .from(events)
      .where(eq(events.userId, userId));
    return Number(r?.c ?? 0);
  }

  async recordAttempt(attempt: NewAttempt): Promise<AttemptRow> {
    const [r] = await this.db
      .insert(webhookAttempts)
      .values({ ...attempt, id: newId('wha') })
      .returning();
    return r!;
  }

  /** The last scheduled attempt of one event to one endpoint: its number and when the next may run. */
  async lastScheduled(endpointId: string, eventId: string): Promise<AttemptRow | null> {
    const [r] = await this.db
      .select()
      .from(webhookAttempts)
      .where(
        and(
          eq(webhookAttempts.endpointId, endpointId),
          eq(webhookAttempts.eventId, eventId),
          gt(webhookAttempts.attempt, MANUAL_ATTEMPT),
        ),
      )
      .orderBy(desc(webhookAttempts.attempt))
      .limit(1);
    return r ?? null;
  }

  /** Newest first; `before` is an attempt id from a previous page. */
  async attempts(endpointId: string, limit: number, before?: string): Promise<AttemptRow[]> {
    const cond = before
      ? and(eq(webhookAttempts.endpointId, endpointId), lt(webhookAttempts.id, before))
      : eq(webhookAttempts.endpointId, endpointId);
    return this.db.select().from(webhookAttempts).where(cond).orderBy(desc(webhookAttempts.id)).limit(limit);
  }
}
