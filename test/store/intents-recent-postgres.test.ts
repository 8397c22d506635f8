import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Store } from '../../src/store/store.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const pgAvailable = await requirePostgres();

/**
 * A fan-out's intents are recorded into copy_intents_recent and moved to copy_intents proper behind the copy
 * (migration 0013). Another process (its sweep) may move a row while this one writes its outcome: the outcome must be
 * written all the same, neither lost nor refused.
 */
describe.runIf(pgAvailable)('intents moved from the narrow table while their outcomes are written', () => {
  let store: Store;
  let mover: pg.Client;
  /** Reads pg_stat_activity outside the mover's transaction (inside one, the view is a snapshot of its start). */
  let watch: pg.Client;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
    mover = new pg.Client({ connectionString: db.url });
    await mover.connect();
    watch = new pg.Client({ connectionString: db.url });
    await watch.connect();
  }, 120_000);
  afterAll(async () => {
    await mover?.end();
    await watch?.end();
    await store?.close();
    await drop?.();
  });

  it('writes an outcome, one or in a batch, on a row another process moves between the update and its commit', async () => {
    const { userId, master, slaves } = await seedAccounts(store, 'mv', 1);
    const t = tradeRow(userId, master.id);
    const rows = Array.from({ length: 3 }, () => intentRow(t.id, slaves[0]!.id));
    expect(await store.trades.recordAction(t, rows, [])).toBe(true);

    // Another process's move, held open: it has deleted the narrow rows and inserted them into copy_intents.
    await mover.query('begin');
    const moved = await mover.query(
      `with m as (delete from copy_intents_recent where trade_id = $1 returning *) insert into copy_intents select * from m returning id`,
      [t.id],
    );
    expect(moved.rowCount).toBe(3);

    // Both writes find the narrow rows in their snapshot and wait for the mover's row locks.
    const one = store.trades.updateIntent(rows[0]!.id, { state: 'confirmed', brokerOrderId: 'o0' });
    const batch = store.trades.applyOutcomes([
      { intentId: rows[1]!.id, update: { state: 'confirmed', brokerOrderId: 'o1' } },
      { intentId: rows[2]!.id, update: { state: 'rejected' } },
    ]);
    const waiting = async () =>
      Number(
        (
          await watch.query(
            `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
          )
        ).rows[0].n,
      );
    // A condition, not a sleep: both updates are blocked on the moved rows.
    for (let i = 0; i < 2000 && (await waiting()) < 2; i++) await new Promise((r) => setImmediate(r));
    expect(await waiting()).toBe(2);
    await mover.query('commit');

    await Promise.all([one, batch]);
    const back = await Promise.all(rows.map((r) => store.trades.intentById(r.id)));
    expect(back.map((b) => [b?.state, b?.brokerOrderId ?? null])).toEqual([
      ['confirmed', 'o0'],
      ['confirmed', 'o1'],
      ['rejected', null],
    ]);
    const where = await mover.query(
      `select tableoid::regclass::text as t from copy_intents where trade_id = $1 order by 1`,
      [t.id],
    );
    expect(where.rows.map((r) => r.t)).toEqual(['copy_intents', 'copy_intents', 'copy_intents']);
  }, 60_000);
});
