/**
 * Platform A, Master fill -> the watcher's queue, polled vs streamed, in one run on one simulated account:
 * two adapters watch the same Master, one polling REST every second (the default), one on MetaApi's stream.
 * Each fill is made at the simulated broker; the time until each adapter's subscribe() listener (what the
 * engine's watcher enqueues) sees position_opened is recorded. Loopback only, bounded in fills and time.
 *
 *   npx tsx scripts/measure-platforma-stream.ts [fills=40] [pollMs=1000]
 */
import { performance } from 'node:perf_hooks';
import { dec } from '../src/domain/decimal.js';
import type { BrokerEvent } from '../src/platforms/adapter.js';
import { MetaTraderAdapter } from '../src/platforms/metatrader/adapter.js';
import { provisionMtAccount } from '../src/platforms/metatrader/connect.js';
import { MetaApiGateway } from '../src/platforms/metatrader/gateway.js';
import { SimBroker } from '../src/simulator/broker.js';
import { startMetaApiSimServer } from '../src/simulator/metaapi/server.js';

const fills = Math.min(200, Number(process.argv[2] ?? 40));
const pollMs = Number(process.argv[3] ?? 1000);
const WAIT_MS = pollMs * 5 + 5_000;

const broker = new SimBroker({ seed: 3 });
broker.setPrice('EURUSD', '1.08000');
const meta = { server: 'Measure-MT5', password: 'pw-measure', platform: 'mt5' as const };
const acc = broker.createAccount({ balance: 1_000_000, hedging: true, meta });
const sim = await startMetaApiSimServer(broker, { detectionMs: 5, deployMs: 5, connectMs: 5 });
const p = await provisionMtAccount({
  baseUrl: sim.baseUrl,
  token: sim.token,
  hosts: sim.hosts,
  server: meta.server,
  login: acc.login,
  password: meta.password,
  platform: 'mt5',
  waitMs: 5_000,
  pollMs: 5,
});
const gateway = () =>
  new MetaApiGateway({ clientUrl: sim.clientApiUrls['new-york']!, token: sim.token, accountId: p.accountId });
const polled = new MetaTraderAdapter({ gateway: gateway(), platform: 'mt5', pollIntervalMs: pollMs });
const streamed = new MetaTraderAdapter({
  gateway: gateway(),
  platform: 'mt5',
  pollIntervalMs: pollMs,
  stream: { clientUrl: sim.streamUrls['new-york']!, token: sim.token, accountId: p.accountId },
});

const seenAt = { polled: new Map<string, number>(), streamed: new Map<string, number>() };
const listen = (into: Map<string, number>) => (ev: BrokerEvent) => {
  if (ev.kind === 'position_opened' && ev.position) into.set(ev.position.id, performance.now());
};
const offs = [polled.subscribe(listen(seenAt.polled)), streamed.subscribe(listen(seenAt.streamed))];

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

await until(() => streamed.streaming, 'stream synchronized');
// The polled adapter needs its baseline poll before a fill can be a change to it.
await new Promise((r) => setTimeout(r, pollMs * 1.5));

const lat = { polled: [] as number[], streamed: [] as number[] };
for (let i = 0; i < fills; i++) {
  const t0 = performance.now();
  const pos = broker.placeOrder(acc.id, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: dec('0.01'),
    tag: `m${i}`,
  }).position!;
  await until(() => seenAt.polled.has(pos.id) && seenAt.streamed.has(pos.id), `fill ${i} seen by both`);
  lat.polled.push(seenAt.polled.get(pos.id)! - t0);
  lat.streamed.push(seenAt.streamed.get(pos.id)! - t0);
  // A random gap, so fills land at every phase of the poll period.
  await new Promise((r) => setTimeout(r, Math.random() * pollMs));
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const row = (name: string, xs: number[]) =>
  `${name.padEnd(9)} p50 ${pct(xs, 0.5).toFixed(1).padStart(7)} ms  p99 ${pct(xs, 0.99).toFixed(1).padStart(7)} ms  max ${Math.max(
    ...xs,
  )
    .toFixed(1)
    .padStart(7)} ms`;
console.log(`platform A, Master fill -> watcher queue, ${fills} fills, poll period ${pollMs} ms`);
console.log(row('polled', lat.polled));
console.log(row('streamed', lat.streamed));
console.log(`ratio p50 polled/streamed: ${(pct(lat.polled, 0.5) / pct(lat.streamed, 0.5)).toFixed(0)}x`);

for (const off of offs) off();
await polled.close();
await streamed.close();
await sim.close();
