#!/usr/bin/env node
// What the copy's read of a group's Slaves costs on PostgreSQL (AccountsRepo.slavesOfGroup) at 1000 Slaves, for two
// builds alternating (compare within one run: the machine is shared): with nothing changed since the last read
// (hit), after a health round of every Slave (all), after a health slice of 100 of them (slice, what falls between
// two copies of a busy Master in a running service), after one Slave's rule changed (rule: every row read again),
// and the health writes themselves. Each round makes its own
// database on the PostgreSQL of TEST_PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) and drops it.
// Both checkouts must be built (`node scripts/build.mjs`); each is imported from ROOT/dist.
// Usage: node scripts/group-read-cost.mjs ROUNDS BEFORE_ROOT AFTER_ROOT
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [roundsArg, ...roots] = process.argv.slice(2);
if (roots.length < 1) {
  console.error('usage: node scripts/group-read-cost.mjs ROUNDS BEFORE_ROOT AFTER_ROOT');
  process.exit(2);
}
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REPS = 60;
const N = 1000;
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];

async function measure(root) {
  const at = (p) => import(pathToFileURL(resolve(root, p)).href);
  const { Store } = await at('dist/src/store/store.js');
  const { Decimal } = await at('dist/src/domain/decimal.js');
  const { initialHealth } = await at('dist/src/domain/account.js');
  const { withDefaults } = await at('dist/src/domain/copy-rule.js');
  const pg = (await at('node_modules/pg/lib/index.js')).default;
  const admin = new pg.Client(ADMIN);
  await admin.connect();
  const name = `copytrade_groupread_${Date.now()}`;
  await admin.query(`create database ${name}`);
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  const store = await Store.open({ dataDir: ':unused:', databaseUrl: url.toString() });
  try {
    const u = await store.users.create('groupread@example.test', 'x');
    const g = await store.accounts.createGroup(u.id, 'g');
    await store.accounts.createMany(
      Array.from({ length: N }, (_, i) => ({
        userId: u.id,
        platform: 'sim',
        role: 'slave',
        name: `S${i}`,
        groupId: g.id,
        brokerAccountId: `s${i}`,
        brokerAccountNumber: String(i),
        balance: new Decimal(10000),
        equity: new Decimal(10000),
      })),
    );
    const ids = (await store.accounts.slavesOfGroup(u.id, g.id)).map((s) => s.account.id);
    for (const id of ids)
      await store.accounts.setRule(id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.5' } }));
    const round = (list, i) =>
      store.accounts.applyHealth(
        list.map((id) => ({
          id,
          health: { ...initialHealth(), checkedAt: new Date().toISOString() },
          funds: { balance: new Decimal(10000), equity: new Decimal(10000 + i) },
        })),
      );
    const res = { hit: [], all: [], slice: [], rule: [], 'write 1000': [], 'write 100': [] };
    const time = async (k, f) => {
      const t = performance.now();
      await f();
      res[k].push(performance.now() - t);
    };
    const read = () => store.accounts.slavesOfGroup(u.id, g.id);
    for (let i = 0; i < REPS; i++) {
      await time('hit', read);
      await time('write 1000', () => round(ids, i));
      await time('all', read);
      const from = (i * 100) % (N - 100);
      await time('write 100', () => round(ids.slice(from, from + 100), i + 1000));
      await time('slice', read);
      await store.accounts.setRule(
        ids[i % N],
        withDefaults({ sizing: { mode: 'multiplier', multiplier: String(1 + (i % 3)) } }),
      );
      await time('rule', read);
    }
    return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v.slice(10)).toFixed(2)]));
  } finally {
    await store.close();
    await admin.query(`drop database ${name}`);
    await admin.end();
  }
}

const rows = [];
for (let r = 0; r < Number(roundsArg ?? 2); r++)
  for (const root of roots) rows.push({ build: root, load: loadavg()[0].toFixed(2), ...(await measure(root)) });
console.log('p50 ms over 50 reads each');
console.table(rows);
