import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { AppError } from '../../src/domain/errors.js';
import { accountLeaseKey } from '../../src/domain/lease.js';
import { LeaseKeeper } from '../../src/engine/lease-keeper.js';
import { NOT_AT_BROKER } from '../../src/engine/order-recovery.js';
import { OrderService, type OrderInput } from '../../src/engine/order-service.js';
import { PanicCloseService } from '../../src/engine/panic-close.js';
import { SCHEDULED_LEASE } from '../../src/roles/worker.js';
import { SimBroker } from '../../src/simulator/broker.js';
import type { LeasesRepo } from '../../src/store/repos/leases.js';
import { seedGroup, startEngine, type EngineHarness } from '../engine/copy-harness.js';
import { engineHarness, type EngineHarness as PanicHarness } from '../engine/harness.js';

/**
 * The writes a worker makes besides the copies (the Master's own order, the panic-close closes and cancels) pass
 * the same write gate: once the worker's lease runs out on its own clock (here an injected one, moved by what the
 * broker saw, so nothing waits on wall time), nothing more of them reaches the broker, and the lease's next holder
 * does the work.
 */
const TTL = 30_000;

/** A keeper over one key whose clock the test moves; `late()` puts it past the lease's write margin. */
async function keeperOf(leases: LeasesRepo, owner: string, key: string, late: () => boolean = () => false) {
  const base = 1_000_000;
  const keeper = new LeaseKeeper(leases, {
    owner,
    ttlMs: TTL,
    wanted: async () => [key],
    onAcquired: async () => undefined,
    onLost: async () => undefined,
    logger: false,
    clock: () => (late() ? base + TTL : base),
  });
  await keeper.tick();
  expect(keeper.mayWrite(key)).toBe(true);
  return keeper;
}

const ORDER: OrderInput = {
  symbol: 'EURUSD',
  side: 'buy',
  volume: dec('0.2'),
  type: 'market',
  price: null,
  stopLoss: null,
  takeProfit: null,
};

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => err,
  );

describe("the Master's own order under its lease", () => {
  const live: EngineHarness[] = [];
  afterEach(async () => {
    for (const h of live.splice(0)) await h.close();
  });

  async function setUp() {
    const broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    const h = await startEngine({ broker, timeoutMs: 2000 });
    live.push(h);
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    const key = accountLeaseKey(g.master.id);
    return { broker, h, g, key };
  }

  it('a worker whose lease ran out records nothing and sends nothing (503, retryable); the successor places it', {
    timeout: 120_000,
  }, async () => {
    const { broker, h, g, key } = await setUp();
    let expired = false;
    const a = await keeperOf(h.store.leases, 'worker-a', key, () => expired);
    // Taken a moment ago; its holder's clock is now past the write margin (a pause, a slow renewal).
    expired = true;
    const ordersA = new OrderService(h.store, h.adapters, h.engine, Date.now, {
      mayWrite: (id) => a.mayWrite(accountLeaseKey(id)),
    });
    const err = await refusal(ordersA.send(g.userId, g.master.id, ORDER, null));
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(broker.positions(g.masterSim)).toEqual([]);
    expect(await h.store.trades.listTrades(g.userId, { accountId: g.master.id, limit: 10 })).toEqual([]);

    // The lease runs out in the store too; the successor takes it and the client's retry goes through.
    await h.store.leases.release(key, 'worker-a', a.epochOf(key) ?? (await h.store.leases.live())[0]!.epoch);
    const b = await keeperOf(h.store.leases, 'worker-b', key);
    const ordersB = new OrderService(h.store, h.adapters, h.engine, Date.now, {
      mayWrite: (id) => b.mayWrite(accountLeaseKey(id)),
    });
    const res = await ordersB.send(g.userId, g.master.id, ORDER, null);
    await res.copies;
    await h.idle();
    expect(res.status).toBe('accepted');
    expect(broker.positions(g.masterSim)).toHaveLength(1);
    expect(broker.positions(g.slaves[0]!.sim)).toHaveLength(1);
  });

  it('a lease that runs out while the write waits (a pacer, a token) is refused at the wire: not sent, trade closed as not_at_broker', {
    timeout: 120_000,
  }, async () => {
    const { broker, h, g, key } = await setUp();
    // The adapter's wait before the write: once the broker has taken this fault, A's clock is past its margin.
    const wait = broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 1, accountId: g.masterSim });
    const pending = () => broker.faults.list().some((f) => f.id === wait);
    const a = await keeperOf(h.store.leases, 'worker-a', key, () => !pending());
    expect(a.mayWrite(key)).toBe(true);
    const ordersA = new OrderService(h.store, h.adapters, h.engine, Date.now, {
      mayWrite: (id) => a.mayWrite(accountLeaseKey(id)),
    });
    const err = await refusal(ordersA.send(g.userId, g.master.id, ORDER, 'req-1'));
    expect(pending()).toBe(false);
    expect(err).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    const tradeId = (err as AppError).details?.tradeId as string;
    expect(broker.positions(g.masterSim)).toEqual([]);
    const trade = await h.store.trades.tradeById(tradeId);
    expect(trade).toMatchObject({ status: 'rejected', masterOutcome: { code: NOT_AT_BROKER } });
    expect(await h.store.trades.intentsOfTrade(tradeId)).toEqual([]);

    await h.store.leases.release(key, 'worker-a', (await h.store.leases.live())[0]!.epoch);
    const b = await keeperOf(h.store.leases, 'worker-b', key);
    const ordersB = new OrderService(h.store, h.adapters, h.engine, Date.now, {
      mayWrite: (id) => b.mayWrite(accountLeaseKey(id)),
    });
    const res = await ordersB.send(g.userId, g.master.id, ORDER, 'req-2');
    await res.copies;
    await h.idle();
    expect(broker.positions(g.masterSim).map((p) => p.tag)).toHaveLength(1);
    expect(broker.positions(g.slaves[0]!.sim)).toHaveLength(1);
    // The settle pass leaves the refused trade as it is: it is final, nothing of it can arrive.
    await h.settler.runOnce({ graceMs: 0 });
    expect(await h.store.trades.tradeById(tradeId)).toMatchObject({ status: 'rejected' });
  });
});

describe('panic-close writes under the deployment lease', () => {
  const live: PanicHarness[] = [];
  const services: PanicCloseService[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop();
    for (const h of live.splice(0)) await h.close();
  });
  const FAST = { maxRounds: 4, backoffMs: 5, maxBackoffMs: 20, settleMs: 20, saveEveryMs: 10, concurrency: 1 };

  async function setUp() {
    const h = await engineHarness({ timeoutMs: 2000 });
    live.push(h);
    const acc = await h.account();
    const ids = h.open(acc, 3);
    const closes = () => h.broker.deals(acc.brokerAccountId).filter((d) => d.entry === 'out').length;
    const closesOf = (id: string) =>
      h.broker.deals(acc.brokerAccountId).filter((d) => d.entry === 'out' && d.positionId === id).length;
    return { h, acc, ids, closes, closesOf };
  }

  async function successor(h: PanicHarness) {
    await h.store.leases.release(SCHEDULED_LEASE, 'worker-a', (await h.store.leases.live())[0]!.epoch);
    const b = await keeperOf(h.store.leases, 'worker-b', SCHEDULED_LEASE);
    const panicB = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      ...FAST,
      mayWrite: () => b.mayWrite(SCHEDULED_LEASE),
    });
    services.push(panicB);
    return panicB;
  }

  it('a holder whose lease ran out sends no close; the job stays running and the successor ends it flat', {
    timeout: 120_000,
  }, async () => {
    const { h, acc, closes } = await setUp();
    let expired = false;
    const a = await keeperOf(h.store.leases, 'worker-a', SCHEDULED_LEASE, () => expired);
    expired = true;
    const panicA = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      ...FAST,
      mayWrite: () => a.mayWrite(SCHEDULED_LEASE),
    });
    services.push(panicA);
    const job = await panicA.start(h.userId, 'account', acc.id);
    const seen = await panicA.wait(job, 15_000);
    expect(panicA.runningHere).toBe(0);
    expect(seen.state).toBe('running');
    expect(closes()).toBe(0);
    expect(h.broker.positions(acc.brokerAccountId)).toHaveLength(3);

    const panicB = await successor(h);
    expect(await panicB.resumeRunning()).toBe(1);
    const done = await panicB.wait(job, 15_000);
    expect(done.state).toBe('succeeded');
    expect(done.progress.accounts[0]).toMatchObject({ state: 'flat', remaining: 0 });
    expect(h.broker.positions(acc.brokerAccountId)).toEqual([]);
    expect(closes()).toBe(3);
  });

  it('a holder that lost the lease (its jobs stopped) and takes it back runs them again', {
    timeout: 120_000,
  }, async () => {
    const { h, acc, closes } = await setUp();
    const a = await keeperOf(h.store.leases, 'worker-a', SCHEDULED_LEASE);
    const panicA = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      ...FAST,
      handOff: () => undefined,
      mayWrite: () => a.mayWrite(SCHEDULED_LEASE),
    });
    services.push(panicA);
    // The worker's onLost: the jobs stop; the job is recorded meanwhile, run by nobody.
    await panicA.stop();
    const job = await panicA.start(h.userId, 'account', acc.id);
    expect(closes()).toBe(0);
    // The worker's onAcquired: the lease is back, its jobs resume here.
    expect(await panicA.resumeRunning()).toBe(1);
    const done = await panicA.wait(job, 15_000);
    expect(done.state).toBe('succeeded');
    expect(closes()).toBe(3);
  });

  it('a lease that runs out mid-job stops the closes at the wire; the successor closes the rest, each position once', {
    timeout: 120_000,
  }, async () => {
    const { h, acc, ids, closes, closesOf } = await setUp();
    // A's clock passes its margin once the broker has dealt the first close.
    const a = await keeperOf(h.store.leases, 'worker-a', SCHEDULED_LEASE, () => closes() >= 1);
    const panicA = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      ...FAST,
      mayWrite: () => a.mayWrite(SCHEDULED_LEASE),
    });
    services.push(panicA);
    const job = await panicA.start(h.userId, 'account', acc.id);
    expect((await panicA.wait(job, 15_000)).state).toBe('running');
    expect(closes()).toBe(1);
    expect(h.broker.positions(acc.brokerAccountId)).toHaveLength(2);

    const panicB = await successor(h);
    expect(await panicB.resumeRunning()).toBe(1);
    const done = await panicB.wait(job, 15_000);
    expect(done.state).toBe('succeeded');
    expect(h.broker.positions(acc.brokerAccountId)).toEqual([]);
    expect(ids.map(closesOf)).toEqual([1, 1, 1]);
    // A late save of the fenced holder cannot rewrite the finished job.
    await h.store.panicJobs.update(job.id, { state: 'running', progress: job.progress });
    expect((await h.store.panicJobs.owned(h.userId, job.id))!.state).toBe('succeeded');
  });
});
