// Issue 47 figure: from the simulated EA's deal event arriving at the bridge endpoint to every Slave's order handed
// to its broker connection, on the embedded store, at 10 Slaves. A benchmark, not a test (`npm run bench bridge`).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachBridgeEndpoint, BRIDGE_WS_PATH } from '../src/api/bridge/endpoint.js';
import { BRIDGE_POLL_PATH } from '../src/api/bridge/poll.js';
import { BridgeTokens, MemoryBridgeTokenRepo } from '../src/auth/bridge-tokens.js';
import { withDefaults } from '../src/domain/copy-rule.js';
import { Decimal } from '../src/domain/decimal.js';
import { AdapterRegistry } from '../src/engine/adapter-registry.js';
import { CopyEngine } from '../src/engine/copy-engine.js';
import { Dispatcher } from '../src/engine/dispatcher.js';
import { Watcher } from '../src/engine/watcher.js';
import { createBridgeAdapterFactory } from '../src/platforms/bridge/factory.js';
import { BridgeHub } from '../src/platforms/bridge/hub.js';
import { BridgeSession } from '../src/platforms/bridge/session.js';
import { SimBroker } from '../src/simulator/broker.js';
import { pollDialer } from '../src/simulator/ea/poll-dialer.js';
import { SimulatedEa } from '../src/simulator/ea/sim-ea.js';
import { Store } from '../src/store/store.js';
import { stubBroker } from '../test/helpers/stub-broker.js';
import { percentile, report } from './lib.js';

const SLAVES = 10;
const REPS = Number(process.env.BENCH_REPS ?? 200);
const WARMUP = 20;
const GAP_MS = 20;
/** MT4's held poll, seconds: what the MQL4 EA asks for (`wait=1`), and a shorter one for comparison. */
const POLL_WAITS = (process.env.BENCH_BRIDGE_POLL_WAITS ?? '1,0.1').split(',').map(Number);

type Transport = { name: string; waitSec: number | null };

/** The same copy measured over MT5's WebSocket and MT4's long polls, one after the other in one run. */
export async function benchBridge(): Promise<void> {
  const transports: Transport[] = [
    { name: 'mt5 websocket', waitSec: null },
    ...POLL_WAITS.map((w) => ({ name: `mt4 long polls (wait ${w} s)`, waitSec: w })),
  ];
  const rows = [];
  const r2 = (v: number) => Math.round(v * 100) / 100;
  for (const t of transports) {
    const s = (await measure(t)).sort((a, b) => a - b);
    rows.push({
      transport: t.name,
      slaves: SLAVES,
      reps: REPS,
      p50_ms: r2(percentile(s, 50)),
      p99_ms: r2(percentile(s, 99)),
      max_ms: r2(s.at(-1)!),
    });
  }
  report('bridge', rows, {
    what: 'deal event at the bridge endpoint -> last of 10 Slave orders handed to its broker connection (embedded store)',
  });
}

async function measure(t: Transport): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-bridgebench-'));
  const store = await Store.open({ dataDir: dir });
  const broker = new SimBroker({ seed: 47 });
  broker.setPrice('EURUSD', '1.10000');
  const sim = broker.createAccount({ balance: 1_000_000, hedging: true, meta: { server: 'Bench-Bridge' } });
  const user = await store.users.create('bridge-bench@example.test', 'x');
  const group = await store.accounts.createGroup(user.id, 'bench');
  const master = await store.accounts.create({
    userId: user.id,
    platform: 'platforma',
    role: 'master',
    name: 'bridge master',
    groupId: group.id,
    brokerAccountId: sim.login,
    brokerAccountNumber: sim.login,
    brokerIdentity: `platforma:bench-bridge:${sim.login}`,
    balance: new Decimal(1_000_000),
    equity: new Decimal(1_000_000),
  });
  for (let i = 0; i < SLAVES; i++) {
    const s = await store.accounts.create({
      userId: user.id,
      platform: 'sim',
      role: 'slave',
      name: `S${i}`,
      groupId: group.id,
      brokerAccountId: `s${i}`,
      brokerAccountNumber: String(1000 + i),
      balance: new Decimal(10000),
      equity: new Decimal(10000),
    });
    await store.accounts.setRule(s.id, withDefaults({ sizing: { mode: 'multiplier', multiplier: '1' } }));
  }
  // Arrival: the frame of a DEAL_ADD event reaching the session, before it is parsed.
  let arrivedAt = 0;
  const onFrame = BridgeSession.prototype.onFrame;
  BridgeSession.prototype.onFrame = function (this: BridgeSession, raw: string) {
    if (arrivedAt === 0 && raw.includes('"DEAL_ADD"')) arrivedAt = performance.now();
    onFrame.call(this, raw);
  };
  const handoffs = { count: 0, last: 0 };
  const hub = new BridgeHub();
  const adapters = new AdapterRegistry({
    open: async (id) => (id === master.id ? { connection: 'bridge', login: sim.login, server: 'Bench-Bridge' } : null),
  });
  adapters.register(createBridgeAdapterFactory({ hub, timeoutMs: 5_000 }));
  adapters.register(
    stubBroker(() => {
      handoffs.count++;
      handoffs.last = performance.now();
    }),
  );
  const tokens = new BridgeTokens(new MemoryBridgeTokenRepo());
  const issued = await tokens.create(master.id);
  const http = createServer((_q, r) => r.end());
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const endpoint = attachBridgeEndpoint(http, {
    hub,
    verify: (t) => tokens.verify(t),
    loginOf: async (id) => (id === master.id ? sim.login : null),
  });
  const port = (http.address() as AddressInfo).port;
  const url =
    t.waitSec === null ? `ws://127.0.0.1:${port}${BRIDGE_WS_PATH}` : `http://127.0.0.1:${port}${BRIDGE_POLL_PATH}`;
  const dial = t.waitSec === null ? {} : { dial: pollDialer({ waitSec: t.waitSec }), terminal: 'mt4' as const };
  const ea = new SimulatedEa({ broker, accountId: sim.id, url, token: issued.token, manualHeartbeat: true, ...dial });
  ea.start();
  await ea.whenWelcomed();
  const engine = new CopyEngine(store, adapters, new Dispatcher());
  const watcher = new Watcher(store, adapters, engine, { scanMs: 3_600_000, resyncMs: 3_600_000 });
  await watcher.start();
  await watcher.idle();
  const total: number[] = [];
  try {
    for (let i = 0; i < WARMUP + REPS; i++) {
      arrivedAt = 0;
      handoffs.count = 0;
      broker.placeOrder(sim.id, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: new Decimal('0.1'),
        tag: `b${i}`,
      });
      const deadline = Date.now() + 10_000;
      while (handoffs.count < SLAVES) {
        if (Date.now() > deadline) throw new Error(`copy ${i}: ${handoffs.count} of ${SLAVES} Slaves handed an order`);
        await new Promise((r) => setImmediate(r));
      }
      if (i >= WARMUP) total.push(handoffs.last - arrivedAt);
      await watcher.idle();
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
  } finally {
    BridgeSession.prototype.onFrame = onFrame;
    await watcher.stop();
    await ea.stop();
    endpoint.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return total;
}
