import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { Decimal } from '../../src/domain/decimal.js';
import { accountLeaseKey } from '../../src/domain/lease.js';
import { inProcessBrokers, type DemoBrokers } from '../../src/demo/demo-brokers.js';
import { startSimulatedBrokers, type SimulatedBrokers } from '../../src/demo/simulated-brokers.js';
import { startService } from '../../src/main.js';
import { startApi, type ApiProcess } from '../../src/roles/api.js';
import { startWorker, SCHEDULED_LEASE, type Worker } from '../../src/roles/worker.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';

const ready = (await requirePostgres()) && (await requireNats());

const TTL_MS = 2000;

/**
 * Two `worker` compositions in this process on one PostgreSQL store and NATS, over simulated brokers that
 * outlive them (their protocol front ends on loopback, as a `copytrade simulator` process serves them). The demo
 * seeding of `serve` makes the accounts, then stops: the workers alone copy what the Master does at its broker.
 */
describe.runIf(ready)('worker processes share the accounts under leases', () => {
  let drop: () => Promise<void>;
  let broker: SimBroker;
  let simulated: SimulatedBrokers;
  let brokers: DemoBrokers;
  let env: Record<string, string>;
  let w1: Worker;
  let w2: Worker;
  let w1StartHeld: string[] = [];
  /** The worker left after the failover test killed the Master's owner. */
  let alive: Worker;
  let w2StartHeld: string[] = [];
  let masterId: string;
  let masterSim: string;
  let slaveIds: string[];
  let store: Store;
  let api: ApiProcess;
  let apiKey: string;

  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    broker = new SimBroker({});
    simulated = await startSimulatedBrokers(broker, '127.0.0.1');
    brokers = { ...inProcessBrokers(broker, simulated), hostsSimPlatform: false };
    env = {
      ...(process.env as Record<string, string>),
      DATABASE_URL: db.url,
      NATS_URL,
      COPYTRADE_BROKER_TIMEOUT_MS: '3000',
      COPYTRADE_HEALTH_INTERVAL_MS: '0',
      // Every process of a deployment opens the broker credentials with the same key.
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    // No bridge account: the EA link is served by `serve` only, never by the workers of a process deployment.
    const seeder = await startService(
      loadConfig({ dataDir: ':memory:', port: '0', demo: true }, { ...env, COPYTRADE_DEMO_BRIDGE: '0' }),
      false,
      {
        simulator: brokers,
      },
    );
    apiKey = seeder.demo!.apiKey;
    await seeder.close();
    const workerCfg = loadConfig({ dataDir: ':memory:' }, env);
    w1 = await startWorker(workerCfg, false, { leaseTtlMs: TTL_MS, simulator: brokers });
    w1StartHeld = w1.keeper.heldKeys();
    w2 = await startWorker(workerCfg, false, { leaseTtlMs: TTL_MS, simulator: brokers, probesPort: 0 });
    w2StartHeld = w2.keeper.heldKeys();
    // Its own connection: either worker may be the one the failover test kills.
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
    api = await startApi(loadConfig({ dataDir: ':memory:', port: '0' }, env), false, { simulator: brokers });
    const all = await store.accounts.all();
    const master = all.find((a) => a.role === 'master' && a.name === 'Demo Master')!;
    masterId = master.id;
    masterSim = (await brokers.accounts()).find((s) => s.meta.demoKey === 'master')!.id;
    slaveIds = all.filter((a) => a.role === 'slave' && a.groupId === master.groupId).map((a) => a.id);
  }, 90_000);

  afterAll(async () => {
    await api?.close();
    await w2?.close();
    await w1?.close();
    await store?.close();
    await simulated?.close();
    await drop?.();
  });

  it('a worker given a probes port answers /healthz, /readyz with its leases check, and /metrics with the leases it holds', async () => {
    expect(w1.probesUrl).toBeNull();
    const url = w2.probesUrl!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    const body = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean }> };
    expect(ready.status).toBe(200);
    expect(body.checks).toMatchObject({ leases: { ok: true }, store: { ok: true }, bus: { ok: true } });
    await expect
      .poll(async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return Number(/^copytrade_leases_held (\d+)/m.exec(text)?.[1] ?? -1) === w2.keeper.heldKeys().length;
      })
      .toBe(true);
  });

  /** Open positions at the brokers of every account but the Masters. */
  const slavePositions = async () => {
    const masters = new Set([masterSim]);
    return broker
      .accounts()
      .filter((a) => !masters.has(a.id))
      .reduce((n, a) => n + broker.positions(a.id).length, 0);
  };

  const masterTrade = (tag: string) =>
    broker.placeOrder(masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: new Decimal('0.1'), tag });

  /** The watcher trade of a Master position, once each Slave's copy of it reached a final state. */
  const copiedOnce = async (positionId: string) => {
    const trades = (await store.trades.tradesOfMasterPosition(masterId, positionId)).filter((t) => t.action === 'open');
    if (trades.length !== 1) return null;
    const intents = await store.trades.intentsOfTrade(trades[0]!.id);
    if (intents.some((i) => !['confirmed', 'rejected', 'skipped', 'denied'].includes(i.state))) return null;
    return intents;
  };

  it('the first worker took every account and the deployment lease; the second, started after, is handed its share', async () => {
    // Started first, alone: everything (the second's first round found nothing free).
    expect(w2StartHeld).toEqual([]);
    expect(w1StartHeld).toContain(SCHEDULED_LEASE);
    expect(w1StartHeld).toContain(accountLeaseKey(masterId));
    const all = await store.accounts.all();
    const masters = all.filter((a) => a.role === 'master').map((a) => accountLeaseKey(a.id));
    const others = all.filter((a) => a.role !== 'master').map((a) => accountLeaseKey(a.id));
    const count = (w: Worker, keys: string[]) => keys.filter((k) => w.keeper.holds(k)).length;
    // Then handed over, Masters and the other accounts each shared out within one of each other.
    await expect
      .poll(
        () =>
          [masters, others].every(
            (keys) =>
              count(w1, keys) + count(w2, keys) === keys.length &&
              Math.abs(count(w1, keys) - count(w2, keys)) <= 1 &&
              w1.keeper.givingKeys().length === 0,
          ),
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    // The deployment lease is one key: it stays where it is.
    expect(w1.keeper.holds(SCHEDULED_LEASE)).toBe(true);
    expect(w2.keeper.holds(SCHEDULED_LEASE)).toBe(false);
    console.log(
      `hand-over: Masters ${count(w1, masters)} / ${count(w2, masters)}, others ${count(w1, others)} / ${count(w2, others)}`,
    );
  }, 40_000);

  const order = async () => {
    const res = await fetch(`${api.baseUrl}/v1/accounts/${masterId}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ symbol: 'EURUSD', side: 'buy', volume: 0.1 }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('the api hands an order to the worker holding the Master: 202 once the intents are durable', async () => {
    const r = await order();
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.copiedTo).toBeGreaterThan(0);
    // Durable before the answer: every Slave's row exists at once.
    const intents = await store.trades.intentsOfTrade(r.body.tradeId);
    expect(intents).toHaveLength(slaveIds.length);
    expect((await store.trades.tradeById(r.body.tradeId))?.status).toBe('accepted');
    await expect
      .poll(async () => (await store.trades.intentsOfTrade(r.body.tradeId)).every((i) => i.state !== 'planned'), {
        timeout: 20_000,
      })
      .toBe(true);
  });

  it('copies a Master trade once; after the owner is killed the other takes over within the TTL and copies on', async () => {
    const before = await slavePositions();
    const p1 = masterTrade('scale-1').position!;
    await expect.poll(() => copiedOnce(p1.id), { timeout: 20_000, interval: 100 }).not.toBeNull();
    const first = (await copiedOnce(p1.id))!;
    expect(new Set(first.map((i) => i.slaveAccountId)).size).toBe(first.length);
    const confirmed1 = first.filter((i) => i.state === 'confirmed').length;
    expect(confirmed1).toBeGreaterThan(0);

    // The Master's owner killed: nothing released, its leases run out on the database's clock.
    const [killed, survivor] = w1.keeper.holds(accountLeaseKey(masterId)) ? [w1, w2] : [w2, w1];
    const epochBefore = killed.keeper.epochOf(accountLeaseKey(masterId))!;
    const killedAt = performance.now();
    await killed.close({ release: false });
    // Made while nobody owns the Master: the successor's start diff copies it.
    const p2 = masterTrade('scale-2').position!;
    await expect
      .poll(() => survivor.keeper.holds(accountLeaseKey(masterId)), { timeout: TTL_MS * 5, interval: 50 })
      .toBe(true);
    const tookOverMs = performance.now() - killedAt;
    await expect.poll(() => copiedOnce(p2.id), { timeout: 20_000, interval: 100 }).not.toBeNull();
    const flowingMs = performance.now() - killedAt;
    const second = (await copiedOnce(p2.id))!;
    expect(new Set(second.map((i) => i.slaveAccountId)).size).toBe(second.length);
    const confirmed2 = second.filter((i) => i.state === 'confirmed').length;
    expect(confirmed2).toBe(confirmed1);
    expect(survivor.keeper.epochOf(accountLeaseKey(masterId))).toBe(epochBefore + 1);
    alive = survivor;
    // Exactly one copy per Slave per Master trade at the brokers: no duplicate, none lost.
    expect(await slavePositions()).toBe(before + confirmed1 + confirmed2);
    // Orders reach the new owner through the same api.
    const r = await order();
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.copiedTo).toBe(confirmed1);
    console.log(
      `failover: lease taken ${Math.round(tookOverMs)} ms, copies flowing ${Math.round(flowingMs)} ms after the kill (TTL ${TTL_MS} ms)`,
    );
  }, 60_000);

  it('a panic-close asked of the api is run by the worker holding the deployment lease', async () => {
    await expect.poll(() => alive.keeper.holds(SCHEDULED_LEASE), { timeout: TTL_MS * 5 }).toBe(true);
    const slave = slaveIds[0]!;
    const res = await fetch(`${api.baseUrl}/v1/accounts/${slave}/panic-close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', prefer: 'wait=10' },
      body: '{}',
    });
    const body = (await res.json()) as { jobId?: string; id?: string };
    expect([200, 202], JSON.stringify(body)).toContain(res.status);
    const jobId = body.jobId ?? body.id!;
    const user = (await store.accounts.byId(slave))!.userId;
    await expect
      .poll(async () => (await store.panicJobs.owned(user, jobId))?.state, { timeout: 20_000 })
      .toBe('succeeded');
  }, 30_000);
});
