import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/store/rows-of.js';
import { newId } from '../../src/domain/ids.js';
import { dec } from '../../src/domain/decimal.js';
import { Store } from '../../src/store/store.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const pgAvailable = await requirePostgres();

/** Every pooled connection's named statements: each connection is checked out at once, so each answers. */
async function preparedOnEveryConnection(pool: pg.Pool): Promise<Array<{ name: string; statement: string }>> {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  try {
    const all = await Promise.all(
      clients.map((c) =>
        c.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements'),
      ),
    );
    return all.flatMap((r) => r.rows);
  } finally {
    for (const c of clients) c.release();
  }
}

/**
 * A copy's record and its outcome batch run as named statements on PostgreSQL: parsed and planned once per
 * connection, not on every fan-out (issue 12).
 */
describe.runIf(pgAvailable)('the copy path as named statements', () => {
  let store: Store;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it('records fan-outs and writes their outcomes through statements each prepared once per connection', async () => {
    const { userId, master, slaves } = await seedAccounts(store, 'nm', 3);
    const fanOuts = 6;
    for (let k = 0; k < fanOuts; k++) {
      const t = tradeRow(userId, master.id, { actionId: `${master.id}:mp${k}:open:1` });
      const rows = slaves.map((s) => intentRow(t.id, s.id));
      expect(await store.trades.recordAction(t, rows, [])).toBe(true);
      await store.trades.applyOutcomes(
        rows.map((r, i) => ({
          intentId: r.id,
          update: { state: 'confirmed' as const, brokerOrderId: `o${k}-${i}` },
          events: [{ userId, accountId: r.slaveAccountId, type: 'copy.confirmed', payload: { intentId: r.id } }],
          links: [
            {
              op: 'upsert' as const,
              link: {
                id: newId('act'),
                kind: 'position' as const,
                masterAccountId: master.id,
                masterPositionId: `mp${k}`,
                slaveAccountId: r.slaveAccountId,
                slavePositionId: `sp${k}-${i}`,
                intentId: r.id,
                volume: dec('0.1'),
              },
            },
          ],
        })),
      );
    }
    // Every row landed where a reader finds it: recorded, moved out of the narrow table, confirmed, linked.
    const confirmed = await store.database.db.execute(
      sql`select count(*)::int as n from only copy_intents where state = 'confirmed'`,
    );
    expect(rowsOf<{ n: number }>(confirmed)[0]!.n).toBe(fanOuts * slaves.length);
    const links = await store.database.db.execute(sql`select count(*)::int as n from position_links where open`);
    expect(rowsOf<{ n: number }>(links)[0]!.n).toBe(fanOuts * slaves.length);

    const prepared = await preparedOnEveryConnection(store.database.pool!);
    const named = (start: string) => prepared.filter((p) => p.statement.trimStart().startsWith(start));
    for (const start of [
      'with t as (insert into trades',
      'with m as (delete from copy_intents_recent',
      'insert into "event_seqs"',
      'insert into "events"',
      'insert into position_links',
    ]) {
      const found = named(start);
      // Prepared by name at least once, and at most once on each connection: not once per fan-out.
      expect(found.length, start).toBeGreaterThan(0);
      expect(found.length, start).toBeLessThanOrEqual(store.database.pool!.totalCount);
      expect(new Set(found.map((p) => p.name)).size, start).toBe(1);
      expect(found[0]!.name, start).toMatch(/^ct_stmt_\d+$/);
    }
  });
});
