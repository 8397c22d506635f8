// `npm run bench record-cost`: what the copy's record (N intent rows in one statement, one commit) costs, split
// by cause: the same statement into clones of copy_intents that differ by one index or one foreign key.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { Decimal } from '../src/domain/decimal.js';
import { newId } from '../src/domain/ids.js';
import { Store } from '../src/store/store.js';
import { seedAccounts } from '../test/helpers/store-seed.js';
import { pgArray } from '../src/store/pg-array.js';
import { percentile, report, type Row } from './lib.js';

const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Index and foreign-key definitions of copy_intents (migrations 0003-0010), one clause each. */
const PARTS: Record<string, (t: string) => string> = {
  tag: (t) => `create unique index ${t}_tag on ${t} (tag)`,
  trade: (t) => `create index ${t}_trade on ${t} (trade_id)`,
  slave: (t) => `create index ${t}_slave on ${t} (slave_account_id, created_at)`,
  state: (t) => `create index ${t}_state on ${t} (state)`,
  statePartial: (t) => `create index ${t}_statep on ${t} (state) where state in ('planned', 'sent', 'unresolved')`,
  fkTrade: (t) => `alter table ${t} add foreign key (trade_id) references trades(id) on delete cascade`,
  fkSlave: (t) => `alter table ${t} add foreign key (slave_account_id) references accounts(id) on delete cascade`,
};
const INDEXES = ['tag', 'trade', 'slave', 'state'];
const FKS = ['fkTrade', 'fkSlave'];

/**
 * Each variant: the primary key plus these parts, written in the app's statement shape (per-column arrays through
 * unnest, constants once; store/repos/trades.ts) unless `json` (one JSON document of every row, the shape before
 * 2026-11-27), kept for the comparison.
 */
const VARIANTS: Array<[string, string[], 'json'?]> = [
  ['PK only', []],
  ['PK + tag unique', ['tag']],
  ['PK + trade_id', ['trade']],
  ['PK + (slave, created_at)', ['slave']],
  ['PK + state', ['state']],
  ['all 5 indexes, no FK', INDEXES],
  ['all indexes + FK trade', [...INDEXES, 'fkTrade']],
  ['all indexes + FK slave', [...INDEXES, 'fkSlave']],
  ['all indexes + both FKs (= copy_intents)', [...INDEXES, ...FKS]],
  ['indexes, state partial, no FK', ['tag', 'trade', 'slave', 'statePartial']],
  ['PK only, one JSON document (the shape before 2026-11-27)', [], 'json'],
  ['all 5 indexes, no FK, one JSON document (the shape before)', INDEXES, 'json'],
];

/** The columns the app's one-statement insert names (store/repos/trades.ts, INTENT_COLS). */
const COLS =
  'id text, trade_id text, slave_account_id text, tag text, action text, symbol text, side text, planned_volume numeric, planned_price numeric, stop_loss numeric, take_profit numeric, state text, skip_reason text, target_id text, outcome jsonb, latency jsonb, attempts integer';
const NAMES = COLS.split(', ').map((c) => c.split(' ')[0]);
const SELECT = NAMES.map((c) => (c === 'attempts' ? 'coalesce(attempts, 0)' : c)).join(', ');

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};
const ms = (v: number) => Number(v.toFixed(2));

async function runStore(kind: 'pglite' | 'postgres', n: number, reps: number, url?: string): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-recordcost-'));
  // PGlite on the main thread: the statement's own cost, without the worker's message hop.
  const store = await Store.open({ dataDir: dir, databaseUrl: url, embeddedOnMainThread: true });
  const exec = (q: string) => store.database.db.execute(sql.raw(q));
  try {
    // A user, a Master and n Slaves: the intents' trade and Slave ids must name real rows (the FK variants check them).
    const seeded = await seedAccounts(store, 'rc', n);
    const user = { id: seeded.userId };
    const master = seeded.master;
    const slaves = seeded.slaves.map((s) => s.id);
    const tables = VARIANTS.map((_, i) => `rc_v${i}`);
    for (const [i, [, parts]] of VARIANTS.entries()) {
      const t = tables[i]!;
      await exec(`create table ${t} (like copy_intents including defaults)`);
      await exec(`alter table ${t} add primary key (id)`);
      for (const p of parts) await exec(PARTS[p]!(t));
    }
    const times = VARIANTS.map(() => [] as number[]);
    const warm = 3;
    for (let r = 0; r < warm + reps; r++) {
      const trade = await store.trades.insertTrade({
        id: newId('trd'),
        userId: user.id,
        masterAccountId: master.id,
        source: 'watcher',
        actionId: `rc:${r}:${randomBytes(4).toString('hex')}`,
        action: 'open',
        symbol: 'EURUSD',
        side: 'buy',
        orderType: 'market',
        volume: new Decimal('1'),
        tag: `rc${randomBytes(8).toString('hex')}`,
        status: 'recorded',
      });
      // Rotate the order each round so no variant always runs first (the machine's load varies).
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = (k + r) % VARIANTS.length;
        const docs = slaves.map((s) => ({
          id: newId('int'),
          trade_id: trade.id,
          slave_account_id: s,
          tag: `rc${randomBytes(8).toString('hex')}`,
          action: 'open',
          symbol: 'EURUSD',
          side: 'buy',
          planned_volume: '0.5',
          planned_price: '1.1',
          stop_loss: '1.09',
          state: 'planned',
          latency: { plan: 1.5 },
        }));
        // Built before the clock starts, either shape: the measure is the statement.
        const q =
          VARIANTS[v]![2] === 'json'
            ? sql.raw(
                `insert into ${tables[v]} (${NAMES.join(', ')}) select ${SELECT} from json_to_recordset('${JSON.stringify(docs).replace(/'/g, "''")}'::json) as x(${COLS})`,
              )
            : sql`insert into ${sql.raw(tables[v]!)} (id, slave_account_id, tag, trade_id, action, symbol, side, planned_volume, planned_price, stop_loss, state, latency)
                select u.id, u.slave_account_id, u.tag, ${trade.id}::text, ${'open'}::text, ${'EURUSD'}::text, ${'buy'}::text,
                  ${'0.5'}::numeric, ${'1.1'}::numeric, ${'1.09'}::numeric, ${'planned'}::text, ${JSON.stringify({ plan: 1.5 })}::jsonb
                from unnest(${pgArray(docs.map((d) => d.id))}::text[], ${pgArray(docs.map((d) => d.slave_account_id))}::text[],
                  ${pgArray(docs.map((d) => d.tag))}::text[]) as u(id, slave_account_id, tag)`;
        const t0 = performance.now();
        await store.database.db.execute(q);
        if (r >= warm) times[v]!.push(performance.now() - t0);
      }
    }
    const base = stats(times[0]!).p50;
    return VARIANTS.map(([what], i) => {
      const s = stats(times[i]!);
      return {
        store: kind,
        measure: `${n} rows, ${what}`,
        p50_ms: ms(s.p50),
        p99_ms: ms(s.p99),
        vs_pk_only_p50: ms(s.p50 / base),
      };
    });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchRecordCost(): Promise<void> {
  const n = Number(process.env.BENCH_RECORD_ROWS ?? 1000);
  const reps = Number(process.env.BENCH_RECORD_REPS ?? 20);
  const stores = (process.env.BENCH_RECORD_STORES ?? 'pglite,postgres').split(',');
  const rows: Row[] = [];
  if (stores.includes('pglite')) rows.push(...(await runStore('pglite', n, reps)));
  if (stores.includes('postgres')) {
    const name = `copytrade_rc_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 1500 });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${name}`;
    try {
      rows.push(...(await runStore('postgres', n, reps, u.toString())));
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
  report('record-cost', rows, { n, reps, stores });
}
