import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, storeCases, type EngineHarness } from './copy-harness.js';

/**
 * Copies of an order-route trade stand open at the Slaves; the service stops before its watcher saw the
 * Master's position, and the Master's position is gone when it starts again (closed while down, or broker
 * state lost). The copies are exposure without a Master: drift to report and close, never `drift: []`.
 */
const stores = await storeCases({ durable: true });

describe.each(stores)('an orphan whose Master position is gone (%s store)', (_name, openStore) => {
  const live: EngineHarness[] = [];
  const drops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const h of live.splice(0)) await h.close();
  });
  afterAll(async () => {
    for (const d of drops.splice(0)) await d();
  });

  async function copiesThenMasterGone() {
    const broker = new SimBroker({ seed: 5 });
    broker.setPrice('EURUSD', '1.10000');
    const { drop, ...where } = await openStore();
    drops.push(drop);
    const db = { where };
    // No watcher in the first life: it stops before it ever sees the Master's position.
    const h1 = await startEngine({ broker, ...db.where });
    const g = await seedGroup(h1.store, broker, {
      slaves: [{ rule: {} }, { rule: {} }, { rule: { sizing: { mode: 'fixed', volume: '0.05' } } }],
    });
    const res = await new OrderService(h1.store, h1.adapters, h1.engine).send(
      g.userId,
      g.master.id,
      {
        symbol: 'EURUSD',
        side: 'sell',
        volume: dec('0.3'),
        type: 'market',
        price: null,
        stopLoss: null,
        takeProfit: null,
      },
      null,
    );
    await res.copies;
    await h1.close();
    expect(g.slaves.map((s) => broker.positions(s.sim).length)).toEqual([1, 1, 1]);
    broker.closePosition(g.masterSim, res.masterPositionId!);
    const h2 = await startEngine({ broker, ...db.where });
    live.push(h2);
    return { broker, g, h2, tradeId: res.tradeId };
  }

  it('the dry run reports each copy as an orphan; the real run closes it with a ledger row and events', {
    timeout: 90_000,
  }, async () => {
    const { broker, g, h2 } = await copiesThenMasterGone();
    const master = (await h2.store.accounts.byId(g.master.id))!;
    const dry = await h2.reconciler.run(master, { dryRun: true });
    expect(dry.drift.map((d) => [d.slaveAccountId, d.kind, d.action]).sort()).toEqual(
      g.slaves.map((s) => [s.account.id, 'orphan', 'close_orphan']).sort(),
    );
    expect(g.slaves.map((s) => broker.positions(s.sim).length)).toEqual([1, 1, 1]);

    const run = await h2.reconciler.run(master, { dryRun: false });
    expect(run.healed).toHaveLength(3);
    await h2.idle();
    expect(g.slaves.flatMap((s) => broker.positions(s.sim))).toEqual([]);
    for (const hd of run.healed) {
      const rows = await h2.store.trades.intentsOfTrade(hd.tradeId!);
      expect(rows.map((r) => [r.slaveAccountId, r.action, r.state])).toEqual([
        [hd.slaveAccountId, 'heal_close', 'confirmed'],
      ]);
    }
    const types = (await h2.store.events.after(g.userId, 0, 500)).map((e) => e.type);
    expect(types.filter((t) => t === 'reconcile.drift_found')).toHaveLength(3);
    expect(types.filter((t) => t === 'reconcile.healed')).toHaveLength(3);
    expect((await h2.reconciler.run(master, { dryRun: true })).drift).toEqual([]);
  });

  it('on a normal start the watcher knows the order-route position and copies its close; nothing is left open', {
    timeout: 90_000,
  }, async () => {
    const { broker, g, h2, tradeId } = await copiesThenMasterGone();
    await h2.start();
    await h2.quiesce([g.master]);
    expect(g.slaves.flatMap((s) => broker.positions(s.sim))).toEqual([]);
    const trades = await h2.store.trades.listTrades(g.userId, { limit: 20 });
    // The order-route trade, and the watcher's copy of the close: no reconciler trade was needed.
    expect(trades.map((t) => [t.source, t.action]).sort()).toEqual([
      ['api', 'open'],
      ['watcher', 'close'],
    ]);
    expect(trades.find((t) => t.source === 'api')!.id).toBe(tradeId);
  });
});

describe('a reconcile pass that reads while an order is copied', () => {
  it('does not take the fresh copy for an orphan or a missing copy: nothing is closed or opened twice', {
    timeout: 90_000,
  }, async () => {
    const broker = new SimBroker({ seed: 9 });
    broker.setPrice('EURUSD', '1.10000');
    const h = await startEngine({ broker, reconcileYoungMs: 5_000 });
    try {
      const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
      await h.start();
      // The Master's read is taken before the order fills and answered after its copies exist (reads of one pass
      // are not one snapshot): played by answering the pass's Master read with a list read before the order.
      const ma = await h.adapters.forAccount(g.master);
      const list = ma.listPositions.bind(ma);
      const stale = await list();
      const res = await new OrderService(h.store, h.adapters, h.engine).send(
        g.userId,
        g.master.id,
        {
          symbol: 'EURUSD',
          side: 'buy',
          volume: dec('0.2'),
          type: 'market',
          price: null,
          stopLoss: null,
          takeProfit: null,
        },
        null,
      );
      await res.copies;
      await h.idle();
      ma.listPositions = async () => {
        ma.listPositions = list;
        return stale;
      };
      const r = await h.reconciler.run((await h.store.accounts.byId(g.master.id))!, { dryRun: false });
      expect(r.drift).toEqual([]);
      await h.idle();
      expect(g.slaves.map((s) => broker.positions(s.sim).length)).toEqual([1, 1]);
      expect((await h.store.trades.listTrades(g.userId, { limit: 10 })).map((t) => t.source)).toEqual(['api']);
    } finally {
      await h.close();
    }
  });
});
