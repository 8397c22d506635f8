import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations, type Database } from '../../src/store/db.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres } from '../helpers/postgres.js';
import { migrateBefore, unmigrated } from '../helpers/migrations.js';

/**
 * Migration 0006 moves event sequence numbers from max(seq) to a counter per scope: on a store that already
 * holds events, each scope's next event continues its numbers (no reuse, which the unique index would refuse).
 */
const pgAvailable = await requirePostgres();

function migrationCase(name: string, open: () => Promise<{ database: Database; cleanup(): Promise<void> }>) {
  describe(`migration 0006 on a store with events: ${name}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;
    let store: Store;

    beforeAll(async () => {
      ({ database, cleanup } = await open());
      await migrateBefore(database, '0006');
      const db = database.db;
      await db.execute(sql`insert into users (id, email, password_hash) values ('usr_1', 'one@example.test', 'h')`);
      const ev = (id: string, account: string | null, seq: number) =>
        db.execute(
          sql`insert into events (id, user_id, account_id, seq, type, payload) values (${id}, 'usr_1', ${account}, ${seq}, 't', '{}'::jsonb)`,
        );
      for (let i = 1; i <= 4; i++) await ev(`evt_a${i}`, 'acc_a', i);
      for (let i = 1; i <= 2; i++) await ev(`evt_u${i}`, null, i);
      await runMigrations(database);
      store = new Store(database);
    }, 60_000);
    afterAll(async () => {
      await database?.close();
      await cleanup?.();
    });

    it('continues every scope after its last number, and starts a new scope at 1', async () => {
      const e = (accountId: string | null) => ({ userId: 'usr_1', accountId, type: 't', payload: {} });
      const rows = await store.events.emit([e('acc_a'), e(null), e('acc_b'), e('acc_a')]);
      expect(rows.map((r) => [r.accountId, r.seq])).toEqual([
        ['acc_a', 5],
        [null, 3],
        ['acc_b', 1],
        ['acc_a', 6],
      ]);
    });
  });
}

migrationCase('PGlite', unmigrated.pglite);

describe.runIf(pgAvailable)('PostgreSQL server', () => {
  migrationCase('PostgreSQL', unmigrated.postgres);
});
