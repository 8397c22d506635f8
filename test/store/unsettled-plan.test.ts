import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { seedAccounts } from '../helpers/store-seed.js';

/**
 * Issue 12 (the soak): the settle loop asks for the unsettled intents every 2 s. Joined to the Slaves in one
 * statement, the embedded store (which keeps no statistics) planned it Slave by Slave through every intent each
 * Slave ever had, a cost that grew with the ledger (17-45 ms at 90,000 intents). It must reach copy_intents only
 * through the index of the few states it asks for, however large the ledger.
 */
describe('the unsettled intents read as the ledger grows', () => {
  let store: Store;
  const seen: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ct-unsettled-'));
  beforeAll(async () => {
    store = await Store.open({ dataDir: dir, embeddedFsync: false, onStatement: (q) => seen.push(q) });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches copy_intents through its state index only, with 20 Slaves and 20,000 settled intents', async () => {
    const seeded = await seedAccounts(store, 'up', 20);
    const u = { id: seeded.userId };
    const m = seeded.master;
    const slaves = seeded.slaves.map((s) => s.id);
    const db = store.database.db;
    await db.execute(sql`insert into trades (id, user_id, master_account_id, source, action, symbol, side, order_type, volume, tag, status, action_id)
      select 'utr' || g, ${u.id}, ${m.id}, 'watcher', 'open', 'EURUSD', 'buy', 'market', 0.1, 'utt' || g, 'accepted', 'uac' || g
      from generate_series(0, 999) g`);
    await db.execute(sql`insert into copy_intents (id, trade_id, slave_account_id, tag, action, symbol, side, state)
      select 'uin' || g, 'utr' || (g / 20), (${`{${slaves.join(',')}}`}::text[])[1 + (g % 20)], 'utg' || g, 'open', 'EURUSD', 'buy',
        case when g < 2 then 'sent' else 'confirmed' end
      from generate_series(0, 19999) g`);
    seen.length = 0;
    const rows = await store.trades.unsettledIntents();
    expect(rows.map((r) => r.intent.id).sort()).toEqual(['uin0', 'uin1']);
    expect(rows.map((r) => r.trade.id)).toEqual(['utr0', 'utr0']);
    // Every way the plans reach copy_intents: an index (by name) or a sequential scan.
    const reads: string[] = [];
    for (const q of seen) {
      if (!/copy_intents/.test(q)) continue;
      // The plan for any values (generic_plan takes $n unbound; the simple protocol sends it so).
      const client = (db as unknown as { $client: { exec(q: string): Promise<Array<{ rows: unknown[] }>> } }).$client;
      const [res] = await client.exec(`explain (generic_plan) ${q}`);
      for (const r of res!.rows as Array<Record<string, string>>) {
        const line = Object.values(r)[0]!;
        const index = /(?:using|Bitmap Index Scan on) (copy_intents_\w+)/.exec(line);
        if (index) reads.push(index[1]!);
        if (/Seq Scan on copy_intents\b/.test(line)) reads.push('seq scan');
      }
    }
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set(['copy_intents_state_idx']));
  });
});
