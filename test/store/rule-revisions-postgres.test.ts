import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { dec } from '../../src/domain/decimal.js';
import { requirePostgres } from '../helpers/postgres.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { twoStores } from '../helpers/two-stores.js';

const pgAvailable = await requirePostgres();

/**
 * Rule revisions written by two processes at once on one PostgreSQL database (migration 0025): the per-target lock
 * numbers them 1..n without a gap or a clash, and the rule read back carries the latest number. The what-if read
 * (one JSON text per table) on PostgreSQL.
 */
describe.runIf(pgAvailable)('rule revisions and the what-if read on PostgreSQL', () => {
  let stores: Awaited<ReturnType<typeof twoStores>>;
  beforeAll(async () => {
    stores = await twoStores();
  }, 120_000);
  afterAll(async () => stores?.close());

  it('number concurrent changes of one Slave without a gap, and the rule carries the latest', async () => {
    const { a, b } = stores;
    const { userId, slaves } = await seedAccounts(a, 'rv', 1);
    const id = slaves[0]!.id;
    const who = { userId, actor: 'key:test' };
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).revisions.setRule(
          who,
          id,
          withDefaults({ sizing: { mode: 'multiplier', multiplier: String(i + 2) } }),
        ),
      ),
    );
    const list = await a.revisions.list(id);
    // Revision 1 is the rule before the first change (the defaults), then one per change.
    expect(list.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => 11 - i));
    const rule = (await b.accounts.rulesFor([id])).get(id)!;
    expect(rule.revision).toBe(11);
    expect(rule.sizing).toEqual(list[0]!.snapshot.rule!.sizing);
  }, 60_000);

  it('reads a Slave period with its Masters trades', async () => {
    const { a } = stores;
    const { userId, master, slaves } = await seedAccounts(a, 'rh', 1);
    const t = tradeRow(userId, master.id, { masterPositionId: 'p1', fillPrice: dec('1.10000'), actionAt: new Date() });
    expect(
      await a.trades.recordAction(
        t,
        [intentRow(t.id, slaves[0]!.id, { state: 'skipped', skipReason: 'x: y', ruleRevision: 3 })],
        [],
      ),
    ).toBe(true);
    const h = await a.replayHistory.read(slaves[0]!.id, new Date(Date.now() - 86_400_000));
    expect(h.rows).toHaveLength(1);
    expect(h.rows[0]!.trade).toMatchObject({ id: t.id, masterPositionId: 'p1' });
    expect(h.rows[0]!.trade.fillPrice!.toString()).toBe('1.1');
    expect(h.masterTrades.map((x) => x.id)).toEqual([t.id]);
  }, 60_000);
});
