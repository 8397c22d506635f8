import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MIGRATION_LOCK_KEY, migrationsFolder } from '../../src/store/db.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const available = await requirePostgres();
const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as {
  entries: unknown[];
};

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const appliedCount = async (url: string) =>
  Number((await query<{ n: string }>(url, 'select count(*) as n from drizzle.__drizzle_migrations'))[0]!.n);

/** Sessions of this database waiting for an advisory lock. */
const waiting = async (url: string) =>
  Number(
    (
      await query<{ n: string }>(
        url,
        `select count(*) as n from pg_locks where locktype = 'advisory' and not granted
           and database = (select oid from pg_database where datname = current_database())`,
      )
    )[0]!.n,
  );

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.runIf(available)('migrations on deploy (PostgreSQL advisory lock)', () => {
  it('processes starting together on a fresh database all open it, and the migrations are applied once', async () => {
    const db = await tempDatabase();
    try {
      const stores = await Promise.all([1, 2, 3].map(() => Store.open({ dataDir: ':unused:', databaseUrl: db.url })));
      try {
        expect(journal.entries.length).toBeGreaterThan(0);
        expect(await appliedCount(db.url)).toBe(journal.entries.length);
        // Every store works on the migrated schema.
        for (const s of stores) await expect(s.ping()).resolves.toBeUndefined();
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    } finally {
      await db.drop();
    }
  });

  it('a process waits for the lock another holds, then finds the migrations applied and applies none again', async () => {
    const db = await tempDatabase();
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
      let opened = false;
      const opening = Store.open({ dataDir: ':unused:', databaseUrl: db.url }).then((s) => {
        opened = true;
        return s;
      });
      await until(async () => (await waiting(db.url)) === 1, 'the opening store to wait for the lock');
      expect(opened).toBe(false);
      // Nothing was applied while the lock was held elsewhere.
      expect((await query(db.url, "select 1 from pg_namespace where nspname = 'drizzle'")).length).toBe(0);
      await holder.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
      const store = await opening;
      try {
        expect(await appliedCount(db.url)).toBe(journal.entries.length);
        // A second start (a rolling upgrade's next process) applies nothing.
        const again = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
        await again.close();
        expect(await appliedCount(db.url)).toBe(journal.entries.length);
        // The lock is free again: no session of ours kept it.
        expect(
          (await holder.query('select pg_try_advisory_lock($1) as ok', [MIGRATION_LOCK_KEY.toString()])).rows[0].ok,
        ).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      await holder.end();
      await db.drop();
    }
  });
});
