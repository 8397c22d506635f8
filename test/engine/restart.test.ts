import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * The service stops (its PGlite data dir stays), the Master keeps trading at its broker, the service starts
 * again: the start diff copies every missed action once, and a second restart copies nothing.
 */
let dir: string;
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;
const pos = (sim: string) => broker.positions(sim);
const mkt = (sim: string, volume: string, tag: string) =>
  broker.placeOrder(sim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec(volume), tag }).position!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-restart-'));
  broker = new SimBroker({ seed: 3 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker, dataDir: dir });
  g = await seedGroup(h.store, broker, {
    slaves: [
      { rule: {} },
      { rule: { sizing: { mode: 'multiplier', multiplier: '0.5' } } },
      { rule: { maxDelayMs: 1 } },
    ],
  });
  await h.start();
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const tradeCount = async () => (await h.store.trades.listTrades(g.userId, { limit: 500 })).length;

describe('restart: missed Master actions are copied once', () => {
  let a: string, b: string, c: string;
  let pendingId: string;

  it('before the stop: copies as usual', async () => {
    a = mkt(g.masterSim, '1', 'mA').id;
    b = mkt(g.masterSim, '0.6', 'mB').id;
    c = mkt(g.masterSim, '0.4', 'mC').id;
    await h.idle();
    expect(pos(g.slaves[0]!.sim)).toHaveLength(3);
    expect(pos(g.slaves[1]!.sim)).toHaveLength(3);
  });

  it('while down: open, partial close, close, SL/TP change, pending placed; after the start every one is copied', async () => {
    await h.close();
    const d = mkt(g.masterSim, '0.3', 'mD').id;
    broker.closePosition(g.masterSim, a, dec('0.5'));
    broker.closePosition(g.masterSim, b);
    broker.modifyPosition(g.masterSim, c, { stopLoss: dec('1.05'), takeProfit: dec('1.2') });
    pendingId = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.2'),
      price: dec('1.09'),
      tag: 'mP',
    }).order.id;

    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    const s1 = pos(g.slaves[0]!.sim);
    expect(s1.map((p) => p.volume.toString()).sort()).toEqual(['0.3', '0.4', '0.5']);
    expect(s1.find((p) => p.volume.eq('0.4'))).toMatchObject({ stopLoss: dec('1.05'), takeProfit: dec('1.2') });
    expect(
      pos(g.slaves[1]!.sim)
        .map((p) => p.volume.toString())
        .sort(),
    ).toEqual(['0.15', '0.2', '0.25']);
    expect(broker.orders(g.slaves[0]!.sim)).toMatchObject([{ type: 'limit', price: dec('1.09') }]);
    // The third Slave allows 1 ms of delay: the open missed while down is stale for it, and the ledger says so.
    const [dTrade] = await h.store.trades.tradesOfMasterPosition(g.master.id, d);
    const rows = await h.store.trades.intentsOfTrade(dTrade!.id);
    expect(rows.find((r) => r.slaveAccountId === g.slaves[2]!.account.id)).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringMatching(/^stale_action/),
    });
  });

  it('a second restart without Master activity copies nothing and finds no drift', async () => {
    const before = await tradeCount();
    const snapshot = g.slaves.map((s) =>
      pos(s.sim)
        .map((p) => `${p.id}:${p.volume}`)
        .sort(),
    );
    await h.close();
    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    expect(await tradeCount()).toBe(before);
    expect(
      g.slaves.map((s) =>
        pos(s.sim)
          .map((p) => `${p.id}:${p.volume}`)
          .sort(),
      ),
    ).toEqual(snapshot);
    const dry = await h.reconciler.run(g.master, { dryRun: true });
    expect(dry.drift).toEqual([]);
  });

  it("a pending fill missed while down links the Slaves' fills; a close missed while down closes them", async () => {
    await h.close();
    broker.setPrice('EURUSD', '1.08900');
    const filled = pos(g.masterSim).find((p) => p.tag === 'mP')!;
    expect(filled).toBeTruthy();
    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    expect((await h.store.trades.openLinksOfMaster(g.master.id, filled.id)).length).toBe(2);
    expect(await h.store.trades.openLinksOfMaster(g.master.id, pendingId, 'order')).toEqual([]);
    await h.close();
    for (const p of pos(g.masterSim)) broker.closePosition(g.masterSim, p.id);
    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    for (const s of g.slaves.slice(0, 2)) expect(pos(s.sim)).toEqual([]);
    const actionIds = (await h.store.trades.listTrades(g.userId, { limit: 500 }))
      .map((t) => t.actionId)
      .filter(Boolean);
    expect(new Set(actionIds).size).toBe(actionIds.length);
  });
});
