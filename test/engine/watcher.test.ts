import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * Trades made by hand at the Master's broker (not through our API) are copied: the watcher sees the
 * simulator's events and the engine mirrors them onto sim Slaves with different rules.
 */
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;
let net: SeededGroup;

const pos = (sim: string) => broker.positions(sim);
const pending = (sim: string) => broker.orders(sim);
const mkt = (
  sim: string,
  side: 'buy' | 'sell',
  volume: string,
  extra: { stopLoss?: string; takeProfit?: string; symbol?: string } = {},
) =>
  broker.placeOrder(sim, {
    symbol: extra.symbol ?? 'EURUSD',
    side,
    type: 'market',
    volume: dec(volume),
    tag: `manual${Math.random().toString(36).slice(2, 8)}`,
    stopLoss: extra.stopLoss ? dec(extra.stopLoss) : null,
    takeProfit: extra.takeProfit ? dec(extra.takeProfit) : null,
  }).position!;

beforeAll(async () => {
  broker = new SimBroker({ seed: 7 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker });
  g = await seedGroup(h.store, broker, {
    slaves: [
      { rule: { sizing: { mode: 'multiplier', multiplier: '1' } } },
      { rule: { sizing: { mode: 'multiplier', multiplier: '0.5' }, reverse: true } },
      { rule: { sizing: { mode: 'fixed', volume: '0.03' }, copyStopLoss: false, copyPendingOrders: false } },
      { rule: { excludeSymbols: ['GBPUSD'] } },
    ],
  });
  net = await seedGroup(h.store, broker, {
    masterHedging: false,
    slaves: [
      { rule: { sizing: { mode: 'multiplier', multiplier: '2' } }, hedging: false },
      { rule: {}, hedging: true },
    ],
  });
  await h.start();
});
afterAll(async () => h?.close());

describe('watcher: manual Master activity is copied', () => {
  let masterPos: string;

  it('open: every Slave gets a copy sized by its rule (reverse flips the side); the ledger has one row per Slave', async () => {
    const p = mkt(g.masterSim, 'buy', '1', { stopLoss: '1.09000', takeProfit: '1.12000' });
    masterPos = p.id;
    await h.idle();
    const [s1, s2, s3, s4] = g.slaves.map((s) => pos(s.sim));
    expect(s1).toMatchObject([{ side: 'buy', volume: dec('1') }]);
    expect(s1![0]!.stopLoss?.toString()).toBe('1.09');
    expect(s2).toMatchObject([{ side: 'sell', volume: dec('0.5') }]);
    // Reversed: the master's stop becomes the slave's target.
    expect(s2![0]!.takeProfit?.toString()).toBe('1.09');
    expect(s2![0]!.stopLoss?.toString()).toBe('1.12');
    expect(s3).toMatchObject([{ volume: dec('0.03'), stopLoss: null }]);
    expect(s4).toHaveLength(1);
    const [trade] = await h.store.trades.tradesOfMasterPosition(g.master.id, masterPos);
    expect(trade).toMatchObject({ source: 'watcher', action: 'open', status: 'accepted', copiedTo: 4 });
    const rows = await h.store.trades.intentsOfTrade(trade!.id);
    expect(rows.map((r) => r.state)).toEqual(['confirmed', 'confirmed', 'confirmed', 'confirmed']);
    expect(rows[0]!.latency).toMatchObject({
      plan: expect.any(Number),
      record: expect.any(Number),
      send: expect.any(Number),
      ack: expect.any(Number),
    });
  });

  it('an excluded symbol is skipped with a reason; the Slave that excludes it has no copy', async () => {
    const p = mkt(g.masterSim, 'sell', '0.2', { symbol: 'GBPUSD' });
    await h.idle();
    const [trade] = await h.store.trades.tradesOfMasterPosition(g.master.id, p.id);
    const rows = await h.store.trades.intentsOfTrade(trade!.id);
    expect(rows.find((r) => r.slaveAccountId === g.slaves[3]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^symbol_excluded/),
    });
    broker.closePosition(g.masterSim, p.id);
    await h.idle();
    for (const s of g.slaves) expect(pos(s.sim).filter((x) => x.symbol === 'GBPUSD')).toEqual([]);
  });

  it("SL/TP change: modified on the copies per rule (reversed swaps, copyStopLoss off keeps the Slave's own)", async () => {
    const s3pos = pos(g.slaves[2]!.sim)[0]!;
    broker.modifyPosition(g.slaves[2]!.sim, s3pos.id, { stopLoss: dec('1.05'), takeProfit: s3pos.takeProfit });
    broker.modifyPosition(g.masterSim, masterPos, { stopLoss: dec('1.08500'), takeProfit: dec('1.13000') });
    await h.idle();
    expect(pos(g.slaves[0]!.sim)[0]).toMatchObject({ stopLoss: dec('1.085'), takeProfit: dec('1.13') });
    expect(pos(g.slaves[1]!.sim)[0]).toMatchObject({ stopLoss: dec('1.13'), takeProfit: dec('1.085') });
    expect(pos(g.slaves[2]!.sim)[0]).toMatchObject({ stopLoss: dec('1.05'), takeProfit: dec('1.13') });
  });

  it('partial close: each copy closes the same fraction, rounded to its step (0.03 x 40% rounds to 0.01)', async () => {
    broker.closePosition(g.masterSim, masterPos, dec('0.4'));
    await h.idle();
    expect(pos(g.slaves[0]!.sim)[0]!.volume.toString()).toBe('0.6');
    expect(pos(g.slaves[1]!.sim)[0]!.volume.toString()).toBe('0.3');
    expect(pos(g.slaves[2]!.sim)[0]!.volume.toString()).toBe('0.02');
    expect(pos(g.slaves[3]!.sim)[0]!.volume.toString()).toBe('0.6');
    const trades = await h.store.trades.tradesOfMasterPosition(g.master.id, masterPos);
    expect(trades.map((t) => t.action)).toEqual(['open', 'modify', 'reduce']);
  });

  it('full close: every copy is closed and every link closed', async () => {
    broker.closePosition(g.masterSim, masterPos);
    await h.idle();
    for (const s of g.slaves) expect(pos(s.sim)).toEqual([]);
    expect(await h.store.trades.openLinksOfMasterAccount(g.master.id)).toEqual([]);
  });

  it('pending orders: placed, changed, cancelled; a Slave with pending copying off gets none', async () => {
    const o = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.4'),
      price: dec('1.09000'),
      tag: 'manualpend1',
    }).order;
    await h.idle();
    expect(pending(g.slaves[0]!.sim)).toMatchObject([
      { type: 'limit', side: 'buy', volume: dec('0.4'), price: dec('1.09') },
    ]);
    // Reversed pending: a sell limit must sit above the market, so the reversed copy of a buy limit is refused by the broker, with its answer in the ledger.
    expect(pending(g.slaves[2]!.sim)).toEqual([]);
    broker.modifyOrder(g.masterSim, o.id, { price: dec('1.08800'), volume: dec('0.6') });
    await h.idle();
    expect(pending(g.slaves[0]!.sim)).toMatchObject([{ price: dec('1.088'), volume: dec('0.6') }]);
    broker.cancelOrder(g.masterSim, o.id);
    await h.idle();
    expect(pending(g.slaves[0]!.sim)).toEqual([]);
    expect(pending(g.slaves[3]!.sim)).toEqual([]);
    const trades = await h.store.trades.listTrades(g.userId, { limit: 10 });
    const placed = trades.find((t) => t.action === 'order_placed')!;
    const rows = await h.store.trades.intentsOfTrade(placed.id);
    expect(rows.find((r) => r.slaveAccountId === g.slaves[2]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^pending_orders_off/),
    });
    expect(rows.find((r) => r.slaveAccountId === g.slaves[1]!.account.id)).toMatchObject({ state: 'rejected' });
  });

  it("pending filled: the Slaves' filled copies are linked (and a Slave without pending copies opens at market), then a close closes them all", async () => {
    const o = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.2'),
      price: dec('1.09500'),
      tag: 'manualpend2',
    }).order;
    await h.idle();
    broker.setPrice('EURUSD', '1.09400');
    await h.idle();
    const masterPosition = pos(g.masterSim).find((p) => p.tag === 'manualpend2')!;
    expect(masterPosition).toBeTruthy();
    expect(pos(g.slaves[0]!.sim)).toMatchObject([{ volume: dec('0.2') }]);
    expect(pos(g.slaves[2]!.sim)).toMatchObject([{ volume: dec('0.03') }]);
    const links = await h.store.trades.openLinksOfMaster(g.master.id, masterPosition.id);
    expect(new Set(links.map((l) => l.slaveAccountId))).toEqual(
      new Set([g.slaves[0]!.account.id, g.slaves[2]!.account.id, g.slaves[3]!.account.id]),
    );
    expect(await h.store.trades.openLinksOfMaster(g.master.id, o.id, 'order')).toEqual([]);
    broker.closePosition(g.masterSim, masterPosition.id);
    await h.idle();
    for (const s of g.slaves) expect(pos(s.sim)).toEqual([]);
  });

  it('volume increase on a netting Master: the copies grow by the sized difference', async () => {
    const p = mkt(net.masterSim, 'buy', '0.3');
    await h.idle();
    mkt(net.masterSim, 'buy', '0.2');
    await h.idle();
    expect(pos(net.masterSim)).toMatchObject([{ id: p.id, volume: dec('0.5') }]);
    expect(pos(net.slaves[0]!.sim)).toMatchObject([{ volume: dec('1') }]);
    // A hedging Slave holds the increase as a second position linked to the same Master position.
    expect(
      pos(net.slaves[1]!.sim)
        .map((x) => x.volume.toString())
        .sort(),
    ).toEqual(['0.2', '0.3']);
    expect((await h.store.trades.openLinksOfMaster(net.master.id, p.id)).map((l) => Number(l.volume)).sort()).toEqual([
      0.2, 0.3, 1,
    ]);
    broker.closePosition(net.masterSim, p.id);
    await h.idle();
    for (const s of net.slaves) expect(pos(s.sim)).toEqual([]);
  });

  it('every action is recorded once under a stable id; seeing the same events again copies nothing', async () => {
    const trades = await h.store.trades.listTrades(g.userId, { limit: 200 });
    const ids = trades.map((t) => t.actionId).filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    const p = mkt(g.masterSim, 'buy', '0.1');
    await h.idle();
    // A reconnect: the watcher diffs the broker against the store again.
    h.watcher.resync(g.master.id);
    await h.idle();
    expect(await h.store.trades.tradesOfMasterPosition(g.master.id, p.id)).toHaveLength(1);
    expect(pos(g.slaves[0]!.sim)).toHaveLength(1);
    const dry = await h.reconciler.run(g.master, { dryRun: true });
    expect(dry.drift).toEqual([]);
  });
});
