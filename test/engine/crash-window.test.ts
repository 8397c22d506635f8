import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import type { BrokerAdapter } from '../../src/platforms/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, storeCases, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * The process dies while the order route is at work (kill -9: nothing after the kill point is written), and a
 * new process starts on the same store against the same brokers. Whatever the kill point, every Slave ends
 * with exactly one copy, under the order route's own trade id (the client holding that id can reconcile), and
 * no second trade is made for the Master position by the watcher or the reconciler.
 */
const never = new Promise<never>(() => undefined);

type KillPoint =
  | 'before the Master send'
  | 'after the Master filled, before its answer was recorded'
  | 'after the intents were recorded, before any Slave send'
  | 'with half of the Slave sends applied at their broker'
  | 'with every Slave send applied, no outcome recorded';

/** Makes the live adapters of the first process stop where the process would have died. */
function dieAt(point: KillPoint, master: BrokerAdapter, slaves: BrokerAdapter[]): void {
  const hang = (a: BrokerAdapter, reachBroker: boolean) => {
    const orig = a.placeOrder.bind(a);
    a.placeOrder = async (req) => {
      if (reachBroker) await orig(req);
      return never;
    };
  };
  if (point === 'before the Master send') hang(master, false);
  if (point === 'after the Master filled, before its answer was recorded') hang(master, true);
  if (point === 'after the intents were recorded, before any Slave send') for (const s of slaves) hang(s, false);
  if (point === 'with half of the Slave sends applied at their broker')
    slaves.forEach((s, i) => {
      hang(s, i % 2 === 0);
    });
  if (point === 'with every Slave send applied, no outcome recorded') for (const s of slaves) hang(s, true);
}

const stores = await storeCases({ durable: true });

describe.each(stores)('the crash window of the order route (%s store)', (_name, openStore) => {
  let offset = 0;
  const clock = () => Date.now() + offset;
  const open: Array<{ h: EngineHarness; crashed: boolean }> = [];
  const drops: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const o of open.splice(0)) if (!o.crashed) await o.h.close();
    offset = 0;
  });
  afterAll(async () => {
    for (const d of drops.splice(0)) await d();
  });

  async function setUp() {
    const broker = new SimBroker({ seed: 11 });
    broker.setPrice('EURUSD', '1.10000');
    const { drop, ...where } = await openStore();
    drops.push(drop);
    const db = { where };
    const h1 = await startEngine({ broker, ...db.where, clock, timeoutMs: 60_000 });
    open.push({ h: h1, crashed: false });
    const g = await seedGroup(h1.store, broker, {
      slaves: [
        { rule: {} },
        { rule: { sizing: { mode: 'multiplier', multiplier: '0.5' } } },
        { rule: {} },
        { rule: {} },
      ],
    });
    await h1.start();
    return { broker, db, h1, g };
  }

  /** kill -9: the first process writes nothing more; its store handle is dropped and a second process starts. */
  async function crashAndRestart(
    broker: SimBroker,
    db: { where: object },
    h1: EngineHarness,
    o: { absentAfterMs?: number } = {},
  ) {
    open.find((x) => x.h === h1)!.crashed = true;
    await h1.watcher.stop().catch(() => undefined);
    await h1.store.close();
    const h2 = await startEngine({ broker, ...db.where, clock, ...o });
    open.push({ h: h2, crashed: false });
    return h2;
  }

  async function expectExactlyOnce(h: EngineHarness, broker: SimBroker, g: SeededGroup, tradeId: string) {
    const trades = await h.store.trades.listTrades(g.userId, { limit: 50 });
    expect(trades.map((t) => [t.id, t.source, t.status])).toEqual([[tradeId, 'api', 'accepted']]);
    const intents = await h.store.trades.intentsOfTrade(tradeId);
    expect(intents.map((i) => i.state)).toEqual(g.slaves.map(() => 'confirmed'));
    expect(g.slaves.map((s) => broker.positions(s.sim).map((p) => p.volume.toString()))).toEqual([
      ['0.2'],
      ['0.1'],
      ['0.2'],
      ['0.2'],
    ]);
    expect(broker.positions(g.masterSim)).toHaveLength(1);
    expect((await h.reconciler.run((await h.store.accounts.byId(g.master.id))!, { dryRun: true })).drift).toEqual([]);
  }

  const order = {
    symbol: 'EURUSD',
    side: 'buy' as const,
    volume: dec('0.2'),
    type: 'market' as const,
    price: null,
    stopLoss: null,
    takeProfit: null,
  };

  const filledPoints: KillPoint[] = [
    'after the Master filled, before its answer was recorded',
    'after the intents were recorded, before any Slave send',
    'with half of the Slave sends applied at their broker',
    'with every Slave send applied, no outcome recorded',
  ];

  it.each(filledPoints)(
    'killed %s: each Slave gets one copy under the same trade id',
    { timeout: 90_000 },
    async (point) => {
      const { broker, db, h1, g } = await setUp();
      dieAt(
        point,
        await h1.adapters.forAccount(g.master),
        await Promise.all(g.slaves.map((s) => h1.adapters.forAccount(s.account))),
      );
      const orders = new OrderService(h1.store, h1.adapters, h1.engine, clock);
      const sent = orders.send(g.userId, g.master.id, order, 'req_1');
      sent.catch(() => undefined);
      // The kill comes once the first process reached its kill point.
      await expect
        .poll(
          async () => {
            const [t] = await h1.store.trades.listTrades(g.userId, { limit: 1 });
            if (!t) return false;
            if (point === 'after the Master filled, before its answer was recorded')
              return broker.positions(g.masterSim).length === 1;
            const intents = await h1.store.trades.intentsOfTrade(t.id);
            const applied = g.slaves.filter((s) => broker.positions(s.sim).length > 0).length;
            return (
              intents.length === g.slaves.length &&
              applied ===
                {
                  'after the intents were recorded, before any Slave send': 0,
                  'with half of the Slave sends applied at their broker': 2,
                  'with every Slave send applied, no outcome recorded': 4,
                }[point as string]
            );
          },
          { timeout: 15_000 },
        )
        .toBe(true);
      const [trade] = await h1.store.trades.listTrades(g.userId, { limit: 1 });

      const h2 = await crashAndRestart(broker, db, h1);
      await h2.start();
      await h2.quiesce([g.master]);
      await expectExactlyOnce(h2, broker, g, trade!.id);
      // A second restart changes nothing.
      await h2.close();
      const h3 = await startEngine({ broker, ...db.where, clock });
      open.push({ h: h3, crashed: false });
      await h3.start();
      await h3.quiesce([g.master]);
      await expectExactlyOnce(h3, broker, g, trade!.id);
    },
  );

  it('killed before the Master send: the trade is unresolved while young, then rejected as never at the broker; nothing is copied', {
    timeout: 90_000,
  }, async () => {
    const { broker, db, h1, g } = await setUp();
    dieAt('before the Master send', await h1.adapters.forAccount(g.master), []);
    const orders = new OrderService(h1.store, h1.adapters, h1.engine, clock);
    orders.send(g.userId, g.master.id, order, 'req_1').catch(() => undefined);
    await expect
      .poll(async () => (await h1.store.trades.listTrades(g.userId, { limit: 1 })).length, { timeout: 15_000 })
      .toBe(1);
    const [trade] = await h1.store.trades.listTrades(g.userId, { limit: 1 });
    expect(trade!.status).toBe('pending');

    const h2 = await crashAndRestart(broker, db, h1, { absentAfterMs: 30_000 });
    await h2.start();
    // Not found, but the write could still have been on the wire: no verdict yet.
    expect((await h2.store.trades.tradeById(trade!.id))!.status).toBe('unresolved');
    offset = 31_000;
    const r = await h2.settler.runOnce({ graceMs: 0 });
    expect(r.orders.rejected).toBe(1);
    const after = (await h2.store.trades.tradeById(trade!.id))!;
    expect(after.status).toBe('rejected');
    expect((after.masterOutcome as { code: string }).code).toBe('not_at_broker');
    await h2.quiesce([g.master]);
    expect(g.slaves.flatMap((s) => broker.positions(s.sim))).toEqual([]);
    expect(await h2.store.trades.listTrades(g.userId, { limit: 50 })).toHaveLength(1);
    const events = await h2.store.events.after(g.userId, 0, 100);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['order.unresolved', 'order.rejected']));
  });

  it('the Master broker cannot answer at restart: the trade stays unresolved, the watcher and reconciler make no trade of their own, and the fan-out runs once the broker answers', {
    timeout: 90_000,
  }, async () => {
    const { broker, db, h1, g } = await setUp();
    dieAt('after the Master filled, before its answer was recorded', await h1.adapters.forAccount(g.master), []);
    const orders = new OrderService(h1.store, h1.adapters, h1.engine, clock);
    orders.send(g.userId, g.master.id, order, 'req_1').catch(() => undefined);
    await expect.poll(() => broker.positions(g.masterSim).length, { timeout: 15_000 }).toBe(1);
    const [trade] = await h1.store.trades.listTrades(g.userId, { limit: 1 });

    const h2 = await crashAndRestart(broker, db, h1);
    let down = true;
    const ma = await h2.adapters.forAccount(g.master);
    const find = ma.findByTag.bind(ma);
    ma.findByTag = async (tag) => {
      if (down) throw new Error('connection refused');
      return find(tag);
    };
    await h2.start();
    await h2.quiesce([g.master]);
    expect((await h2.store.trades.tradeById(trade!.id))!.status).toBe('unresolved');
    expect(await h2.store.trades.listTrades(g.userId, { limit: 50 })).toHaveLength(1);
    expect(g.slaves.flatMap((s) => broker.positions(s.sim))).toEqual([]);

    down = false;
    await h2.quiesce([g.master]);
    await expectExactlyOnce(h2, broker, g, trade!.id);
  });
});
