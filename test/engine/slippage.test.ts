import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { engineOnStore, seedGroup, storeCases } from './copy-harness.js';

/**
 * The max slippage guard, end to end: the price moves between the Master's fill and the copy's planning; a
 * Slave whose price for its side is now worse than the Master's fill by more than its rule allows is skipped
 * (slippage_exceeded, with the figures), the others copy. A quote the Slave broker cannot give skips a bounded
 * copy (slippage_unknown) rather than sending it blind.
 */
const stores = await storeCases();

describe.each(stores)('maxSlippage (%s store)', (_name, db) => {
  const broker = new SimBroker({ seed: 5 });
  const engine = engineOnStore(db, broker);

  const group = async () => {
    const g = await seedGroup(engine().store, broker, {
      slaves: [
        { rule: { maxSlippage: '0.0005' } },
        { rule: { maxSlippage: '0.002' } },
        { rule: {} },
        { rule: { maxSlippage: '0.0005', reverse: true } },
        // The same bound in points of EURUSD's tick (0.00001).
        { rule: { maxSlippagePoints: '50' } },
      ],
    });
    await engine().watcher.stop();
    await engine().start();
    return g;
  };
  const rowsOf = async (userId: string) => {
    const [trade] = await engine().store.trades.listTrades(userId, { limit: 5 });
    return new Map((await engine().store.trades.intentsOfTrade(trade!.id)).map((r) => [r.slaveAccountId, r]));
  };

  it('a buy: the ask rose 10 pips after the Master filled; the 5-pip Slave is skipped with the figures, the rest copy', async () => {
    broker.setPrice('EURUSD', '1.10000');
    const g = await group();
    const fill = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('1'),
      tag: newId('int'),
    }).deal!.price;
    // Synchronously after the fill, before the watcher plans the copies.
    broker.setPrice('EURUSD', '1.10100');
    const ask = broker.quote('EURUSD').ask;
    await engine().idle();
    const rows = await rowsOf(g.userId);
    const [tight, loose, free, reversed] = g.slaves;
    expect(rows.get(tight!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: `slippage_exceeded: the Slave's ask ${ask} is ${ask.minus(fill)} worse than the Master's fill ${fill} (maxSlippage 0.0005)`,
    });
    expect(broker.positions(tight!.sim)).toEqual([]);
    expect(rows.get(loose!.account.id)?.state).toBe('confirmed');
    expect(rows.get(free!.account.id)?.state).toBe('confirmed');
    // The reversed copy sells: a higher bid is better for it, so it goes through.
    expect(rows.get(reversed!.account.id)?.state).toBe('confirmed');
    expect(broker.positions(reversed!.sim).map((p) => p.side)).toEqual(['sell']);
    expect(rows.get(g.slaves[4]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: `slippage_exceeded: the Slave's ask ${ask} is ${ask.minus(fill)} worse than the Master's fill ${fill} (maxSlippagePoints 50 x tick 0.00001 = 0.0005)`,
    });
  }, 30_000);

  it('a sell: the bid fell 10 pips; the 5-pip Slave is skipped, the reversed one (a buy, now cheaper) copies', async () => {
    broker.setPrice('EURUSD', '1.10000');
    const g = await group();
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'sell',
      type: 'market',
      volume: dec('1'),
      tag: newId('int'),
    });
    broker.setPrice('EURUSD', '1.09900');
    await engine().idle();
    const rows = await rowsOf(g.userId);
    expect(rows.get(g.slaves[0]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^slippage_exceeded: the Slave's bid 1\.0989/),
    });
    expect([1, 2, 3].map((i) => rows.get(g.slaves[i]!.account.id)?.state)).toEqual([
      'confirmed',
      'confirmed',
      'confirmed',
    ]);
  }, 30_000);

  it('order route, price unmoved: every Slave copies (the spread alone is no slippage for a same-side copy)', async () => {
    broker.setPrice('EURUSD', '1.10000');
    const g = await group();
    const orders = new OrderService(engine().store, engine().adapters, engine().engine);
    const r = await orders.send(
      g.userId,
      g.master.id,
      {
        symbol: 'EURUSD',
        side: 'buy',
        volume: dec('1'),
        type: 'market',
        price: null,
        stopLoss: null,
        takeProfit: null,
      },
      null,
    );
    await r.copies;
    const rows = await rowsOf(g.userId);
    expect([0, 1, 2].map((i) => rows.get(g.slaves[i]!.account.id)?.state)).toEqual([
      'confirmed',
      'confirmed',
      'confirmed',
    ]);
  }, 30_000);

  it('the Slave broker cannot quote now: a bounded copy is skipped (slippage_unknown), an unbounded one copies', async () => {
    broker.setPrice('EURUSD', '1.10000');
    const g = await group();
    // A first copy caches the instrument specs: from then on the quote is the only read while planning.
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('1'),
      tag: newId('int'),
    });
    await engine().idle();
    expect(broker.positions(g.slaves[0]!.sim)).toHaveLength(1);
    broker.faults.inject({ op: 'read', kind: 'reset', accountId: g.slaves[0]!.sim });
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('1'),
      tag: newId('int'),
    });
    await engine().idle();
    const rows = await rowsOf(g.userId);
    expect(rows.get(g.slaves[0]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^slippage_unknown: /),
    });
    expect(rows.get(g.slaves[2]!.account.id)?.state).toBe('confirmed');
    expect(broker.positions(g.slaves[0]!.sim)).toHaveLength(1);
    expect(broker.faults.list()).toEqual([]);
  }, 30_000);
});
