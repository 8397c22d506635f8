import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * Issue 10 §1: copying must never feed on itself. A Master position carrying the tag of one of our copies
 * made from its own group (what a broker account connected both as Master and as Slave shows) is not
 * copied, by the watcher nor by the reconciler; a copy made by another group (chained copying) is copied,
 * unless its provenance runs back through this group (a cycle of groups).
 */
let broker: SimBroker;
let h: EngineHarness;
let g1: SeededGroup;
let g2: SeededGroup;

const open = (sim: string, tag: string) =>
  broker.placeOrder(sim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag }).position!;
const copyTagsOn = async (g: SeededGroup, masterPositionId: string) => {
  const [trade] = await h.store.trades.tradesOfMasterPosition(g.master.id, masterPositionId);
  return (await h.store.trades.intentsOfTrade(trade!.id)).map((i) => i.tag);
};
const loopEvents = async (g: SeededGroup) =>
  (await h.store.events.after(g.userId, 0, 1000)).filter((e) => e.type === 'copy.loop_ignored');

beforeAll(async () => {
  broker = new SimBroker({ seed: 11 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker });
  g1 = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
  g2 = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
  await h.start();
});
afterAll(async () => h?.close());

describe('copy loop guard', () => {
  let g1CopyTag: string;
  let g2CopyTag: string;

  it('a Master position carrying a copy tag of its own group is not copied, and the reconciler does not heal it open', async () => {
    const p = open(g1.masterSim, 'manual-1');
    await h.idle();
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
    g1CopyTag = (await copyTagsOn(g1, p.id))[0]!;

    // What the Master's broker shows when the Slave is the same broker account: the Slave's copy, with our tag.
    const echo = open(g1.masterSim, g1CopyTag);
    await h.idle();
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
    expect(await h.store.trades.tradesOfMasterPosition(g1.master.id, echo.id)).toEqual([]);
    expect((await loopEvents(g1)).map((e) => e.payload)).toEqual([
      expect.objectContaining({ kind: 'position', itemId: echo.id, tag: g1CopyTag, groupId: g1.master.groupId }),
    ]);

    const r = await h.reconciler.run((await h.store.accounts.byId(g1.master.id))!, { dryRun: false });
    expect(r.drift.filter((d) => d.masterPositionId === echo.id)).toEqual([]);
    await h.idle();
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
  });

  it('a restart diff treats it the same way (no copy after a restart either)', async () => {
    const echo = open(g1.masterSim, g1CopyTag);
    h.watcher.resync(g1.master.id);
    await h.idle();
    expect(await h.store.trades.tradesOfMasterPosition(g1.master.id, echo.id)).toEqual([]);
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
  });

  it('a pending order carrying it is not copied either, nor is its fill', async () => {
    const before = broker.orders(g1.slaves[0]!.sim).length;
    const limit = broker.placeOrder(g1.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      price: dec('1.05000'),
      volume: dec('0.1'),
      tag: g1CopyTag,
    }).order!;
    await h.idle();
    expect(broker.orders(g1.slaves[0]!.sim)).toHaveLength(before);
    expect((await loopEvents(g1)).at(-1)!.payload).toMatchObject({ kind: 'order', itemId: limit.id });
    broker.setPrice('EURUSD', '1.04000');
    // Filled at the Master: the order is gone and a position carries the tag.
    expect(broker.orders(g1.masterSim).map((o) => o.id)).not.toContain(limit.id);
    expect(broker.positions(g1.masterSim).filter((p) => p.tag === g1CopyTag).length).toBeGreaterThanOrEqual(3);
    await h.idle();
    h.watcher.resync(g1.master.id);
    await h.idle();
    broker.setPrice('EURUSD', '1.10000');
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
    expect(await h.store.trades.listTrades(g1.userId, { accountId: g1.master.id, limit: 100 })).toHaveLength(1);
  });

  it("another group's copy seen on this Master is chained copying: copied", async () => {
    // G1's Slave is the same broker account as G2's Master: G2 copies what G1 copied there.
    const chained = open(g2.masterSim, g1CopyTag);
    await h.idle();
    expect(broker.positions(g2.slaves[0]!.sim)).toHaveLength(1);
    g2CopyTag = (await copyTagsOn(g2, chained.id))[0]!;
    expect(await loopEvents(g2)).toEqual([]);
  });

  it('a copy whose provenance runs back through this group (G1 -> G2 -> G1) is not copied', async () => {
    const back = open(g1.masterSim, g2CopyTag);
    await h.idle();
    expect(await h.store.trades.tradesOfMasterPosition(g1.master.id, back.id)).toEqual([]);
    expect(broker.positions(g1.slaves[0]!.sim)).toHaveLength(1);
    expect((await loopEvents(g1)).at(-1)!.payload).toMatchObject({
      itemId: back.id,
      tag: g2CopyTag,
      groupId: g2.master.groupId,
    });
  });
});
