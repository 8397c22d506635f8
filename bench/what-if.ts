// `npm run bench what-if`: the what-if preview (docs/what-if.md) on the embedded store: 30 days of one Master's
// actions (WHATIF_ACTIONS, default 1,000: opens and their closes) copied to WHATIF_SLAVES (default 50) Slaves, each
// Slave's candidate rule previewed once. Goal (issue 50): all the previews within 5 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { withDefaults } from '../src/domain/copy-rule.js';
import { previewRule } from '../src/engine/what-if/preview.js';
import { Store } from '../src/store/store.js';
import { seedAccounts } from '../test/helpers/store-seed.js';
import { percentile, report } from './lib.js';

const DAY = 86_400_000;

/** 30 days of `actions` Master actions (an open, then its close) and a confirmed copy of each on every Slave. */
async function seedHistory(store: Store, masterId: string, userId: string, slaves: string[], actions: number) {
  const exec = (q: ReturnType<typeof sql>) => store.database.db.execute(q);
  const start = Date.now() - 30 * DAY + 60_000;
  const step = Math.floor((30 * DAY - 120_000) / actions);
  await exec(sql`
    insert into trades (id, user_id, master_account_id, source, action, symbol, side, order_type, volume, price,
                        tag, status, master_position_id, fill_price, action_at, created_at)
    select 'trd_b' || i, ${userId}, ${masterId}, 'watcher', case when i % 2 = 0 then 'open' else 'close' end,
           'EURUSD', case when (i / 2) % 2 = 0 then 'buy' else 'sell' end, 'market',
           (0.1 * (1 + (i / 2) % 5))::numeric, null, 'tag_b' || i, 'done', 'pos' || (i / 2),
           (1.1 + ((i * 37) % 200) / 100000.0)::numeric(10,5),
           to_timestamp((${start}::bigint + i::bigint * ${step}) / 1000.0),
           to_timestamp((${start}::bigint + i::bigint * ${step}) / 1000.0)
    from generate_series(0, ${actions - 1}) as i`);
  const sizing = (vol: string) =>
    `'{"v":1,"rule":{"sizing":{"mode":"multiplier","multiplier":"1"},"minVolume":null,"maxVolume":null},` +
    `"input":{"masterVolume":"' || ${vol} || '","entryPrice":"' || t.fill_price || '"},` +
    `"spec":{"symbol":"EURUSD","volumeStep":"0.01","minVolume":"0.01","maxVolume":"100","contractSize":"100000","tickSize":"0.00001"},` +
    `"result":{"volume":"' || ${vol} || '"}}'`;
  for (const slave of slaves)
    await exec(sql`
      insert into copy_intents (id, trade_id, slave_account_id, tag, action, symbol, side, planned_volume, state,
                                fill_price, filled_volume, sizing_inputs, created_at, updated_at)
      select 'int_' || ${slave} || t.id, t.id, ${slave}, 'ct_' || ${slave} || t.id, t.action, t.symbol, t.side,
             t.volume, 'confirmed', t.fill_price, t.volume,
             case when t.action = 'open' then (${sql.raw(sizing('t.volume'))})::jsonb end,
             t.action_at + interval '50 milliseconds', t.action_at + interval '300 milliseconds'
      from trades t where t.master_account_id = ${masterId}`);
}

export async function benchWhatIf(): Promise<void> {
  const actions = Number(process.env.WHATIF_ACTIONS ?? 1000);
  const n = Number(process.env.WHATIF_SLAVES ?? 50);
  const dir = mkdtempSync(join(tmpdir(), 'ct-whatif-'));
  const store = await Store.open({ dataDir: dir });
  try {
    const seeded = await seedAccounts(store, 'wi', n);
    await seedHistory(
      store,
      seeded.master.id,
      seeded.userId,
      seeded.slaves.map((s) => s.id),
      actions,
    );
    const candidate = withDefaults({ sizing: { mode: 'multiplier', multiplier: '2' } });
    const unchanged = withDefaults(undefined);
    const times: number[] = [];
    let copies = 0;
    const t0 = performance.now();
    for (const slave of seeded.slaves) {
      const t = performance.now();
      const p = await previewRule(store, slave, candidate, 30, new Date());
      times.push(performance.now() - t);
      copies += p.copies.length;
      if (p.totals.changed !== p.copies.length) throw new Error(`slave ${slave.id}: not every copy changed`);
    }
    const total = performance.now() - t0;
    // The determinism check of the issue, on the bench's history: the rule in place changes nothing.
    const same = await previewRule(store, seeded.slaves[0]!, unchanged, 30, new Date());
    if (same.totals.changed !== 0) throw new Error(`the unchanged rule changed ${same.totals.changed} copies`);
    const sorted = [...times].sort((a, b) => a - b);
    report(
      'what-if',
      [
        {
          actions,
          slaves: n,
          copies,
          'total ms': Math.round(total),
          'per Slave p50 ms': Math.round(percentile(sorted, 50)),
          'per Slave p99 ms': Math.round(percentile(sorted, 99)),
          'goal ms': 5000,
        },
      ],
      { store: 'embedded (PGlite)' },
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
