import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { loadReceiptKey } from '../../src/receipts/receipt-key.js';
import { ReceiptSealer } from '../../src/receipts/sealer.js';
import { verifyAccount } from '../../src/receipts/verify.js';
import { rowsOf } from '../../src/store/rows-of.js';
import { requirePostgres } from '../helpers/postgres.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { twoStores } from '../helpers/two-stores.js';

const pgAvailable = await requirePostgres();

/**
 * Two processes sealing one account's ended rows at once (two stores on one PostgreSQL database, small batches so
 * their transactions interleave): the chain row's lock makes them take turns, so every row gets one receipt and the
 * chain has no fork, no gap and no repeat.
 */
describe.runIf(pgAvailable)('receipts sealed by two processes on PostgreSQL', () => {
  let stores: Awaited<ReturnType<typeof twoStores>>;
  beforeAll(async () => {
    stores = await twoStores();
  }, 120_000);
  afterAll(async () => stores?.close());

  it('append each ended row once, on one chain that verifies', async () => {
    const { a, b } = stores;
    const { userId, master, slaves } = await seedAccounts(a, 'rc', 1);
    for (let i = 0; i < 4; i++) {
      const t = tradeRow(userId, master.id);
      const rows = Array.from({ length: 10 }, () =>
        intentRow(t.id, slaves[0]!.id, { state: 'skipped', skipReason: 'symbol_excluded: test', plannedVolume: null }),
      );
      expect(await a.trades.recordAction(t, rows, [])).toBe(true);
    }
    const key = loadReceiptKey(null, { create: true });
    const sealers = [a, b].map((s) => new ReceiptSealer(s.receipts, key, { everyMs: 60_000, graceMs: 0, batch: 3 }));
    const sealed = await Promise.all(sealers.map((s) => s.runOnce(0)));
    expect(sealed[0]! + sealed[1]!).toBe(40);
    const seqs = rowsOf<{ seq: number }>(
      await a.database.db.execute(sql`select seq from receipts where account_id = ${slaves[0]!.id} order by seq`),
    ).map((r) => r.seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const v = await verifyAccount(b.receipts, [key.current], slaves[0]!.id);
    expect(v).toMatchObject({ receipts: 40, fault: null, unsealed: 0 });
  }, 60_000);
});
