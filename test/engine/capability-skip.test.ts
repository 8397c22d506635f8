import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { createSimAdapterFactory } from '../../src/platforms/sim/factory.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { lackingFactory } from '../helpers/lacking.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * A Slave whose platform lacks what a Master action needs is not sent the copy: the planner skips it with
 * `capability_missing: <flag>` in the ledger, the other Slaves are copied as usual, and nothing reaches its
 * broker (no failed send, no rejected row).
 */
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;

beforeAll(async () => {
  broker = new SimBroker({ seed: 5 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker });
  g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
  const poor = g.slaves[1]!.sim;
  // Before any adapter is built: the second Slave's platform has no partial close, no SL/TP change, no pending orders.
  h.adapters.register(
    lackingFactory(
      createSimAdapterFactory(broker, { timeoutMs: 40 }),
      ['partialClose', 'modifyPositionSlTp', 'pendingOrders'],
      (id) => id === poor,
    ),
  );
  await h.start();
});
afterAll(async () => h?.close());

const rowsOf = async (masterPositionId: string, action: string) => {
  const trade = (await h.store.trades.tradesOfMasterPosition(g.master.id, masterPositionId)).find(
    (t) => t.action === action,
  );
  expect(trade, `a ${action} trade`).toBeDefined();
  return h.store.trades.intentsOfTrade(trade!.id);
};

describe('capabilities in the copy pipeline', () => {
  let masterPos: string;

  it('an open is copied to both (market orders are supported)', async () => {
    masterPos = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('1'),
      tag: 'manualcap1',
    }).position!.id;
    await h.idle();
    for (const s of g.slaves) expect(broker.positions(s.sim)).toHaveLength(1);
  });

  it('a partial close: the Slave without partialClose gets a skipped intent with the reason, not a failed send', async () => {
    broker.closePosition(g.masterSim, masterPos, dec('0.4'));
    await h.idle();
    const rows = await rowsOf(masterPos, 'reduce');
    const [rich, poor] = g.slaves.map((s) => rows.find((r) => r.slaveAccountId === s.account.id));
    expect(rich).toMatchObject({ state: 'confirmed' });
    expect(poor).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^capability_missing: partialClose/),
    });
    expect(broker.positions(g.slaves[0]!.sim)[0]!.volume.toString()).toBe('0.6');
    expect(broker.positions(g.slaves[1]!.sim)[0]!.volume.toString()).toBe('1');
  });

  it('an SL/TP change is skipped with modifyPositionSlTp on that Slave only', async () => {
    broker.modifyPosition(g.masterSim, masterPos, { stopLoss: dec('1.08'), takeProfit: null });
    await h.idle();
    const rows = await rowsOf(masterPos, 'modify');
    expect(rows.find((r) => r.slaveAccountId === g.slaves[1]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^capability_missing: modifyPositionSlTp/),
    });
    expect(broker.positions(g.slaves[0]!.sim)[0]!.stopLoss?.toString()).toBe('1.08');
    expect(broker.positions(g.slaves[1]!.sim)[0]!.stopLoss).toBeNull();
  });

  it('a pending order is skipped with pendingOrders, and the full close still reaches every Slave (closing needs no flag)', async () => {
    const o = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.2'),
      price: dec('1.09'),
      tag: 'manualcap2',
    }).order;
    await h.idle();
    const placed = (await h.store.trades.listTrades(g.userId, { limit: 10 })).find((t) => t.action === 'order_placed')!;
    const rows = await h.store.trades.intentsOfTrade(placed.id);
    expect(rows.find((r) => r.slaveAccountId === g.slaves[1]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^capability_missing: pendingOrders/),
    });
    expect(broker.orders(g.slaves[0]!.sim)).toHaveLength(1);
    expect(broker.orders(g.slaves[1]!.sim)).toHaveLength(0);
    broker.cancelOrder(g.masterSim, o.id);
    broker.closePosition(g.masterSim, masterPos);
    await h.idle();
    for (const s of g.slaves) expect(broker.positions(s.sim)).toEqual([]);
  });
});
