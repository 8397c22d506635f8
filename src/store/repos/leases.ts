import { sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { StaleLeaseError, type Fence } from '../../domain/lease.js';
import type { Tx } from './events.js';
import { pgArray } from '../pg-array.js';
import { rowsOf } from '../rows-of.js';

export interface Lease {
  key: string;
  owner: string;
  epoch: number;
  expiresAt: Date;
}

interface LeaseSqlRow {
  key: string;
  owner: string;
  epoch: string | number;
  expires_at: string | Date;
}

const toLease = (r: LeaseSqlRow): Lease => ({
  key: r.key,
  owner: r.owner,
  epoch: Number(r.epoch),
  expiresAt: new Date(r.expires_at),
});

/** The SQLSTATE of a driver error (55P03: lock not available), also when wrapped by the query builder. */
function pgCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; i++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

const interval = (ms: number) => sql`(${Math.max(0, Math.round(ms))}::double precision * interval '1 millisecond')`;

/**
 * Lease rows (see `leases` in schema.ts). Every time comparison is on the database's clock (`now()`), so a
 * worker whose clock drifts cannot keep a lease past its expiry. A released lease keeps its row: the epoch only
 * ever grows, so a late writer of an old epoch is refused even after several changes of owner.
 */
export class LeasesRepo {
  constructor(private readonly db: Db) {}

  /**
   * Takes `key` for `owner` for `ttlMs`: a new row at epoch 1, or an expired (or released) one, or one this owner
   * holds already, at epoch + 1. Null when another owner holds it unexpired, or when its row is locked by a fenced
   * write in progress (maybe a paused holder's): the caller tries again next round instead of stalling.
   */
  async acquire(key: string, owner: string, ttlMs: number): Promise<Lease | null> {
    return (await this.acquireMany([key], owner, ttlMs))[0] ?? null;
  }

  /**
   * `acquire` for many keys in one statement (a worker's first round at 10,000 accounts took two minutes one key at
   * a time). A row locked by a fenced write in progress is skipped, not waited for, so one busy key does not hold
   * up the others; it is tried again next round. Returns the leases taken.
   */
  async acquireMany(keys: string[], owner: string, ttlMs: number): Promise<Lease[]> {
    if (keys.length === 0) return [];
    const r = await this.db
      .transaction(async (tx) => {
        // Only a new key inserted at the same moment by another worker can still make it wait.
        await tx.execute(sql`set local lock_timeout = '200ms'`);
        return tx.execute(sql`
      with wanted as (select distinct k as key from unnest(${pgArray(keys)}::text[]) as k),
      existing as (select l.key from leases l join wanted w on w.key = l.key),
      free as (select l.key from leases l join wanted w on w.key = l.key for update of l skip locked)
      insert into leases (key, owner, epoch, expires_at, acquired_at)
      select w.key, ${owner}, 1, now() + ${interval(ttlMs)}, now() from wanted w
      where w.key in (select key from free) or w.key not in (select key from existing)
      order by w.key
      on conflict (key) do update
        set owner = excluded.owner, epoch = leases.epoch + 1, expires_at = excluded.expires_at, acquired_at = now()
        where leases.expires_at <= now() or leases.owner = excluded.owner
      returning key, owner, epoch, expires_at`);
      })
      .catch((err: unknown) => {
        if (pgCode(err) === '55P03') return null;
        throw err;
      });
    return r ? rowsOf<LeaseSqlRow>(r).map(toLease) : [];
  }

  /**
   * Extends a lease held by `owner` at `epoch`. Also after its expiry as long as nobody took it over (the epoch
   * is unchanged, so nothing was written by anyone else). Null when the lease moved on: the caller lost it.
   */
  async renew(key: string, owner: string, epoch: number, ttlMs: number): Promise<Lease | null> {
    const r = await this.db.execute(sql`
      update leases set expires_at = now() + ${interval(ttlMs)}
      where key = ${key} and owner = ${owner} and epoch = ${epoch}
      returning key, owner, epoch, expires_at`);
    const [row] = rowsOf<LeaseSqlRow>(r);
    return row ? toLease(row) : null;
  }

  /**
   * `renew` for many leases of one owner in one statement (a renewal round): the keys still held at their epoch
   * are extended and returned; a key missing from the answer moved on (the caller lost it).
   */
  async renewMany(owner: string, held: Array<{ key: string; epoch: number }>, ttlMs: number): Promise<Lease[]> {
    if (held.length === 0) return [];
    const r = await this.db.execute(sql`
      update leases set expires_at = now() + ${interval(ttlMs)}
      from jsonb_to_recordset(${JSON.stringify(held)}::jsonb) as h(key text, epoch bigint)
      where leases.key = h.key and leases.epoch = h.epoch and leases.owner = ${owner}
      returning leases.key, leases.owner, leases.epoch, leases.expires_at`);
    return rowsOf<LeaseSqlRow>(r).map(toLease);
  }

  /** Gives the lease up at once (expiry now) so another worker can take it without waiting for the TTL. */
  async release(key: string, owner: string, epoch: number): Promise<boolean> {
    const r = await this.db.execute(sql`
      update leases set expires_at = now()
      where key = ${key} and owner = ${owner} and epoch = ${epoch}
      returning key`);
    return rowsOf(r).length > 0;
  }

  /** `release` for many leases of one owner in one statement; returns the keys released. */
  async releaseMany(owner: string, held: Array<{ key: string; epoch: number }>): Promise<string[]> {
    if (held.length === 0) return [];
    const r = await this.db.execute(sql`
      update leases set expires_at = now()
      from jsonb_to_recordset(${JSON.stringify(held)}::jsonb) as h(key text, epoch bigint)
      where leases.key = h.key and leases.epoch = h.epoch and leases.owner = ${owner}
      returning leases.key`);
    return rowsOf<{ key: string }>(r).map((x) => x.key);
  }

  /**
   * Deletes the rows under `prefix` that ran out more than `olderThanMs` ago: presence rows of workers gone for
   * good (each worker process announces itself under a new id). Never an account's row: its epoch must only grow.
   */
  async prune(prefix: string, olderThanMs: number): Promise<number> {
    const r = await this.db.execute(sql`
      delete from leases where starts_with(key, ${prefix}) and expires_at < now() - ${interval(olderThanMs)}
      returning key`);
    return rowsOf(r).length;
  }

  async get(key: string): Promise<Lease | null> {
    const r = await this.db.execute(sql`select key, owner, epoch, expires_at from leases where key = ${key}`);
    const [row] = rowsOf<LeaseSqlRow>(r);
    return row ? toLease(row) : null;
  }

  /** Unexpired leases, by key: who owns what now. */
  async live(): Promise<Lease[]> {
    const r = await this.db.execute(
      sql`select key, owner, epoch, expires_at from leases where expires_at > now() order by key`,
    );
    return rowsOf<LeaseSqlRow>(r).map(toLease);
  }
}

/**
 * Inside a write's transaction: refuses (StaleLeaseError, rolling the write back) unless `fence` holds every key
 * at the epoch the store has. The rows are locked `for share` until the write commits, so a takeover (an update
 * of the row) waits for it and the new owner's first read sees it.
 */
export async function checkFence(tx: Tx, fence: Fence, keys: string[]): Promise<void> {
  const wanted = [...new Set(keys)].sort();
  if (wanted.length === 0) return;
  const r = await tx.execute(sql`
    select key, owner, epoch, expires_at from leases
    where key in (${sql.join(
      wanted.map((k) => sql`${k}`),
      sql`, `,
    )})
    order by key for share`);
  const found = new Map(rowsOf<LeaseSqlRow>(r).map((row) => [row.key, toLease(row)]));
  for (const key of wanted) {
    const held = fence.epochOf(key);
    const cur = found.get(key);
    if (held === undefined || !cur || cur.owner !== fence.owner || cur.epoch !== held)
      throw new StaleLeaseError(key, held, cur ? { owner: cur.owner, epoch: cur.epoch } : null);
  }
}
