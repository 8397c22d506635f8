import { and, asc, desc, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { events } from '../schema.js';
import { newId } from '../../domain/ids.js';
import type { Bus } from '../../bus/bus.js';

export type EventRow = typeof events.$inferSelect;

export interface NewEvent {
  userId: string;
  accountId: string | null;
  type: string;
  payload: Record<string, unknown>;
  schemaVersion?: number;
}

/** A transaction or the database itself: events are appended inside the caller's transaction. */
export type Tx = Pick<Db, 'execute' | 'select' | 'insert'>;

/**
 * The event outbox. `append` must run in the same transaction as the state change it reports, so an event
 * exists exactly when its change does. Sequence numbers are dense per (user, account).
 */
export class EventsRepo {
  private readonly listeners = new Set<(userId: string) => void>();
  private bus: Bus | null = null;

  constructor(private readonly db: Db) {}

  /**
   * Three statements whatever the batch size: lock every scope (sorted, so two writers cannot deadlock),
   * read each scope's last sequence number, insert all rows. Copying to many Slaves writes many events at once.
   */
  async append(tx: Tx, evs: NewEvent[]): Promise<EventRow[]> {
    if (evs.length === 0) return [];
    const scopeOf = (e: NewEvent) => `${e.userId}|${e.accountId ?? ''}`;
    const scopes = [...new Set(evs.map(scopeOf))].sort();
    // Serialise writers of one scope so two transactions cannot take the same sequence number.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('evseq:' || s)) from unnest(${toPgArray(scopes)}::text[]) as s order by s`);
    const users = [...new Set(evs.map((e) => e.userId))];
    const last = await tx.select({ userId: events.userId, accountId: events.accountId, max: sql<number>`max(${events.seq})::int` }).from(events)
      .where(inArray(events.userId, users)).groupBy(events.userId, events.accountId);
    const next = new Map(last.map((r) => [`${r.userId}|${r.accountId ?? ''}`, r.max]));
    const rows = evs.map((e) => {
      const scope = scopeOf(e);
      const seq = (next.get(scope) ?? 0) + 1;
      next.set(scope, seq);
      return { id: newId('evt'), userId: e.userId, accountId: e.accountId, seq, type: e.type, schemaVersion: e.schemaVersion ?? 1, payload: e.payload };
    });
    return tx.insert(events).values(rows).returning();
  }

  /** Appends in a transaction of its own, for changes that are a single write already done. */
  async emit(evs: NewEvent[]): Promise<EventRow[]> {
    const rows = await this.db.transaction((tx) => this.append(tx, evs));
    this.notify(evs.map((e) => e.userId));
    return rows;
  }

  /** Wakes the live stream and the deliverer after a commit (they re-read from their cursor: no data in the signal). */
  notify(userIds: string[]): void {
    const users = [...new Set(userIds)];
    // With a bus, every process (this one included) hears it through its subscription: one path for all.
    if (this.bus) for (const u of users) this.bus.publish(`events.appended.${u}`, u);
    else this.wake(users);
  }

  private wake(userIds: string[]): void {
    for (const u of userIds) for (const l of this.listeners) l(u);
  }

  /** Signals appends across processes; without a bus only this process's listeners are woken. */
  useBus(bus: Bus): () => void {
    this.bus = bus;
    const off = bus.subscribe('events.appended.*', (userId) => this.wake([userId]));
    return () => {
      off();
      this.bus = null;
    };
  }

  onAppended(listener: (userId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async after(userId: string, cursor: number, limit: number): Promise<EventRow[]> {
    return this.db.select().from(events).where(and(eq(events.userId, userId), gt(events.cursor, cursor))).orderBy(asc(events.cursor)).limit(limit);
  }

  async allAfter(cursor: number, limit: number): Promise<EventRow[]> {
    return this.db.select().from(events).where(gt(events.cursor, cursor)).orderBy(asc(events.cursor)).limit(limit);
  }

  /** A user's events in (after, upTo], in cursor order: the gap-free feed reads only up to its horizon. */
  async between(userId: string, after: number, upTo: number, limit: number): Promise<EventRow[]> {
    return this.db.select().from(events)
      .where(and(eq(events.userId, userId), gt(events.cursor, after), lte(events.cursor, upTo)))
      .orderBy(asc(events.cursor)).limit(limit);
  }

  /** The highest cursor taken by a committed event (0 when none). */
  async topCursor(): Promise<number> {
    const [top] = await this.db.select({ c: events.cursor }).from(events).orderBy(desc(events.cursor)).limit(1);
    return top?.c ?? 0;
  }

  /** Cursors and their users after `cursor`, in order: what the feed scans for gaps. */
  async cursorsAfter(cursor: number, limit: number): Promise<Array<{ c: number; u: string }>> {
    return this.db.select({ c: events.cursor, u: events.userId }).from(events).where(gt(events.cursor, cursor)).orderBy(asc(events.cursor)).limit(limit);
  }

  async byId(userId: string, id: string): Promise<EventRow | null> {
    const [row] = await this.db.select().from(events).where(and(eq(events.userId, userId), eq(events.id, id))).limit(1);
    return row ?? null;
  }
}

/** A PostgreSQL array literal for a text[] parameter (both drivers pass it as one string). */
function toPgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}
