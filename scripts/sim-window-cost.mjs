#!/usr/bin/env node
// What one history-window request costs the simulator at a small and a large account history, two builds
// alternating in one process (compare within one run: the machine is shared). An account trades an open and its
// close every 2 s of a pinned clock, as the soak's do; the requests ask for the last 30 s, as the TradeLocker
// adapter does after every write: TradeLocker's ordersHistory route (the handler itself), the broker's order and
// deal windows (cTrader's order and deal lists, MetaApi's history), and a tag lookup of a tag it never used.
// Both checkouts must be built (`node scripts/build.mjs`); each is imported from ROOT/dist.
// Usage: node scripts/sim-window-cost.mjs ROUNDS BEFORE_ROOT AFTER_ROOT [sizes=100,1000,2000]
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [roundsArg, beforeRoot, afterRoot, sizesArg = '100,1000,2000'] = process.argv.slice(2);
if (!beforeRoot || !afterRoot) {
  console.error('usage: node scripts/sim-window-cost.mjs ROUNDS BEFORE_ROOT AFTER_ROOT [sizes=100,1000,2000]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const sizes = sizesArg.split(',').map(Number);
const CALLS = 400;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function build(root) {
  const at = (p) => import(pathToFileURL(resolve(root, 'dist/src/simulator', p)).href);
  const [{ SimBroker }, { buildRoutes }, { columnSet }, { dec }] = await Promise.all([
    at('broker.js'),
    at('tradelocker/routes.js'),
    at('tradelocker/columns.js'),
    import(pathToFileURL(resolve(root, 'dist/src/domain/decimal.js')).href),
  ]);
  return { SimBroker, buildRoutes, columnSet, dec };
}

/** An account with `trades` opens and closes (2 finished orders and 2 deals each), one every 2 s. */
function world(m, trades) {
  let t = Date.parse('2026-11-23T10:00:00.000Z');
  const broker = new m.SimBroker({ seed: 1, now: () => new Date(t) });
  broker.setPrice('EURUSD', '1.10000');
  const sim = broker.createAccount({ balance: 10_000_000 });
  for (let i = 0; i < trades; i++) {
    t += 2000;
    const r = broker.placeOrder(sim.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: m.dec('0.1'),
      tag: `t${i}`,
    });
    broker.closePosition(sim.id, r.position.id);
  }
  const routes = m.buildRoutes({
    broker,
    directory: null,
    columns: m.columnSet(),
    rateLimits: [],
    historyPageSize: 500,
    prices: null,
    historyBarsLimit: 5000,
  });
  const history = routes.find((r) => r.method === 'GET' && r.pattern.source.endsWith('/ordersHistory$'));
  const from = new Date(t - 30_000);
  const query = new URLSearchParams({ from: String(from.getTime()) });
  return {
    ordersHistory: () => history.handler({ params: ['1'], query, body: {}, acct: { sim } }),
    orderWindow: () => broker.orders(sim.id, { includeHistory: true, from }),
    dealWindow: () => broker.deals(sim.id, { from }),
    unknownTag: () => broker.findByTag(sim.id, 'never-used'),
  };
}

/** Mean microseconds per call, after a warm-up. */
function time(fn) {
  for (let i = 0; i < 50; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) fn();
  return ((performance.now() - t0) * 1000) / CALLS;
}

const builds = { before: await build(beforeRoot), after: await build(afterRoot) };
const results = {};
console.log(`load before: ${load()}`);
for (let r = 0; r < rounds; r++) {
  for (const n of sizes) {
    for (const side of r % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
      const w = world(builds[side], n / 2);
      for (const [name, fn] of Object.entries(w)) {
        const k = `${name} ${n} ${side}`;
        (results[k] ??= []).push(time(fn));
      }
    }
  }
}
console.log(`load after: ${load()}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('request          history rows  before us  after us');
for (const name of ['ordersHistory', 'orderWindow', 'dealWindow', 'unknownTag']) {
  for (const n of sizes) {
    const b = median(results[`${name} ${n} before`]).toFixed(1);
    const a = median(results[`${name} ${n} after`]).toFixed(1);
    console.log(`${name.padEnd(16)} ${String(n).padStart(12)}  ${b.padStart(9)}  ${a.padStart(8)}`);
  }
}
