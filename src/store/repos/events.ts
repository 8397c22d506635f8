import { and, asc, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { eventSeqs, events } from '../schema.js';
import { newId } from '../../domain/ids.js';
import type { Bus } from '../../bus/bus.js';
import { executeNamed } from '../named-statement.js';

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
   * Two statements whatever the batch size: one upsert of the scopes' counters (its row locks serialise writers
   * of a scope until commit; scopes sorted, so two writers cannot deadlock) hands out each scope's range of
   * sequence numbers, then one insert of all rows. Copying to many Slaves writes many events at once.
   *
   * The insert is one statement of one JSON parameter (`json_to_recordset`), whatever the batch size: a 1000-Slave
   * fan-out's outcome flush appends 1000+ events, and the query builder's multi-row VALUES (7,000 values, each
   * checked and typed one by one, then mapped back from `returning`) was most of the main thread's CPU per fan-out.
   */
  async append(tx: Tx, evs: NewEvent[]): Promise<void> {
    const rows = await this.numbered(tx, evs);
    if (rows.length === 0) return;
    // One JSON document: the payloads nest in it as they are (no second escaping as array elements).
    const doc = JSON.stringify(
      rows.map((r) => ({
        i: r.id,
        u: r.userId,
        a: r.accountId,
        s: r.seq,
        t: r.type,
        v: r.schemaVersion,
        p: r.payload,
      })),
    );
    await executeNamed(
      tx,
      sql`
      insert into ${events} (id, user_id, account_id, seq, type, schema_version, payload)
      select i, u, a, s, t, v, p
      from rows from (json_to_recordset(${doc}::json) as (i text, u text, a text, s int, t text, v int, p jsonb))
        with ordinality as x(i, u, a, s, t, v, p, o) order by o`,
    );
  }

  /** The same rows numbered the same way, inserted through the query builder for their `returning` rows. */
  private async appendReturning(tx: Tx, evs: NewEvent[]): Promise<EventRow[]> {
    const rows = await this.numbered(tx, evs);
    return rows.length === 0 ? [] : tx.insert(events).values(rows).returning();
  }

  /** Each event with its id and its scope's next sequence number (the counters bumped in one statement). */
  private async numbered(
    tx: Tx,
    evs: NewEvent[],
  ): Promise<Array<typeof events.$inferInsert & { seq: number; schemaVersion: number; accountId: string | null }>> {
    if (evs.length === 0) return [];
    const counts = new Map<string, { userId: string; scope: string; n: number }>();
    for (const e of evs) {
      const key = `${e.userId}|${e.accountId ?? ''}`;
      const c = counts.get(key) ?? { userId: e.userId, scope: e.accountId ?? '', n: 0 };
      c.n += 1;
      counts.set(key, c);
    }
    const scopes = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
    const bumped = await executeNamed(
      tx,
      sql`
      insert into ${eventSeqs} (user_id, scope, last_seq)
      select u, s, n from unnest(${toPgArray(scopes.map((c) => c.userId))}::text[], ${toPgArray(scopes.map((c) => c.scope))}::text[],
        ${toPgArray(scopes.map((c) => String(c.n)))}::int[]) with ordinality as t(u, s, n, o) order by o
      on conflict (user_id, scope) do update set last_seq = ${eventSeqs}.last_seq + excluded.last_seq
      returning user_id, scope, last_seq`,
    );
    // The first number of each scope's range: its new last minus what this batch takes.
    const next = new Map(
      rowsOf<{ user_id: string; scope: string; last_seq: number }>(bumped).map((r) => [
        `${r.user_id}|${r.scope}`,
        Number(r.last_seq) - counts.get(`${r.user_id}|${r.scope}`)!.n,
      ]),
    );
    return evs.map((e) => {
      const scope = `${e.userId}|${e.accountId ?? ''}`;
      const seq = next.get(scope)! + 1;
      next.set(scope, seq);
      return {
        id: newId('evt'),
        userId: e.userId,
        accountId: e.accountId,
        seq,
        type: e.type,
        schemaVersion: e.schemaVersion ?? 1,
        payload: e.payload,
      };
    });
  }

  /** Appends in a transaction of its own, for changes that are a single write already done. */
  async emit(evs: NewEvent[]): Promise<EventRow[]> {
    const rows = await this.db.transaction((tx) => this.appendReturning(tx, evs));
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
    return this.db
      .select()
      .from(events)
      .where(and(eq(events.userId, userId), gt(events.cursor, cursor)))
      .orderBy(asc(events.cursor))
      .limit(limit);
  }

  async allAfter(cursor: number, limit: number): Promise<EventRow[]> {
    return this.db.select().from(events).where(gt(events.cursor, cursor)).orderBy(asc(events.cursor)).limit(limit);
  }

  /** A user's events in (after, upTo], in cursor order: the gap-free feed reads only up to its horizon. */
  async between(userId: string, after: number, upTo: number, limit: number): Promise<EventRow[]> {
    return this.db
      .select()
      .from(events)
      .where(and(eq(events.userId, userId), gt(events.cursor, after), lte(events.cursor, upTo)))
      .orderBy(asc(events.cursor))
      .limit(limit);
  }

  /** The highest cursor taken by a committed event (0 when none). */
  async topCursor(): Promise<number> {
    const [top] = await this.db.select({ c: events.cursor }).from(events).orderBy(desc(events.cursor)).limit(1);
    return top?.c ?? 0;
  }

  /** Cursors and their users after `cursor`, in order: what the feed scans for gaps. */
  async cursorsAfter(cursor: number, limit: number): Promise<Array<{ c: number; u: string }>> {
    return this.db
      .select({ c: events.cursor, u: events.userId })
      .from(events)
      .where(gt(events.cursor, cursor))
      .orderBy(asc(events.cursor))
      .limit(limit);
  }

  async byId(userId: string, id: string): Promise<EventRow | null> {
    const [row] = await this.db
      .select()
      .from(events)
      .where(and(eq(events.userId, userId), eq(events.id, id)))
      .limit(1);
    return row ?? null;
  }
}

/** A PostgreSQL array literal for a text[] parameter (both drivers pass it as one string). */
function toPgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/** `execute` gives `{rows}` on both drivers; guard the shape rather than trust a cast. */
function rowsOf<T>(r: unknown): T[] {
  return Array.isArray(r) ? (r as T[]) : ((r as { rows: T[] }).rows ?? []);
}
