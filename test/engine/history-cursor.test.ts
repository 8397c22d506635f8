import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * A Master trade made while no watch ran (a crash, a failover, a stop) and closed before the next watch started:
 * the start diff compares open positions only, so without the broker's deal history it left no trace at all. The
 * watch replays the Master's deals since its stored cursor: every Master action the broker recorded gets a row
 * per Slave, skipped with the reason when it can no longer be copied.
 */
let dir: string;
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;
const pos = (sim: string) => broker.positions(sim);
const mkt = (sim: string, volume: string, tag: string) =>
  broker.placeOrder(sim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec(volume), tag }).position!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-cursor-'));
  broker = new SimBroker({ seed: 5 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker, dataDir: dir });
  g = await seedGroup(h.store, broker, {
    slaves: [{ rule: {} }, { rule: { sizing: { mode: 'multiplier', multiplier: '2' } } }],
  });
  await h.start();
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rowsOfPosition(positionId: string) {
  const trades = await h.store.trades.tradesOfMasterPosition(g.master.id, positionId);
  return Promise.all(trades.map(async (t) => ({ action: t.action, rows: await h.store.trades.intentsOfTrade(t.id) })));
}

describe('Master history cursor: nothing the broker recorded is left without ledger rows', () => {
  it('before the stop: copies as usual', async () => {
    mkt(g.masterSim, '0.1', 'm1');
    await h.idle();
    expect(pos(g.slaves[0]!.sim)).toHaveLength(1);
  });

  it('a position opened and closed while no watch ran, and a pending order placed and cancelled, get a row per Slave for each action, skipped closed_before_copy', async () => {
    await h.close();
    const quick = mkt(g.masterSim, '0.2', 'mQ').id;
    broker.closePosition(g.masterSim, quick);
    const partly = mkt(g.masterSim, '0.3', 'mR').id;
    broker.closePosition(g.masterSim, partly, dec('0.1'));
    broker.closePosition(g.masterSim, partly);
    const limit = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.2'),
      price: dec('1.05'),
      tag: 'mL',
    }).order.id;
    broker.cancelOrder(g.masterSim, limit);

    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    for (const [id, expected] of [
      [quick, ['open', 'close']],
      [partly, ['open', 'reduce', 'close']],
    ] as const) {
      const actions = await rowsOfPosition(id);
      expect(
        actions.map((a) => a.action),
        `actions of ${id}`,
      ).toEqual(expected);
      for (const a of actions) {
        expect(a.rows.map((r) => r.slaveAccountId).sort()).toEqual(g.slaves.map((s) => s.account.id).sort());
        for (const r of a.rows)
          expect(r, `${a.action} of ${id}`).toMatchObject({
            state: 'skipped',
            skipReason: expect.stringMatching(/^closed_before_copy: /),
          });
      }
    }
    const [placed, cancelled] = await Promise.all(
      ['order_placed', 'order_cancelled'].map(async (action) => {
        const t = (await h.store.trades.listTrades(g.userId, { limit: 500 })).find(
          (x) => x.masterOrderId === limit && x.action === action,
        );
        return t ? h.store.trades.intentsOfTrade(t.id) : [];
      }),
    );
    for (const rows of [placed!, cancelled!]) {
      expect(rows).toHaveLength(g.slaves.length);
      for (const r of rows) expect(r.skipReason).toMatch(/^closed_before_copy: the Master placed pending order/);
    }
    // Nothing was sent: the Slaves hold only the copy made before the stop.
    for (const s of g.slaves) expect(pos(s.sim)).toHaveLength(1);
  });

  it('a restart replays the same deals again without a second row', async () => {
    const before = (await h.store.trades.listTrades(g.userId, { limit: 500 })).length;
    await h.close();
    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    expect((await h.store.trades.listTrades(g.userId, { limit: 500 })).length).toBe(before);
  });

  it('a position the watch saw open and that closed while down is copied closed, not skipped', async () => {
    const open = pos(g.masterSim)[0]!;
    await h.close();
    broker.closePosition(g.masterSim, open.id);
    h = await startEngine({ broker, dataDir: dir });
    await h.start();
    await h.idle();
    for (const s of g.slaves) expect(pos(s.sim)).toEqual([]);
  });
});
