import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/simulator/broker.js';
import { dec } from '../../src/domain/decimal.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * A copy whose answer never came and whose one lookup failed too is settled as soon as the broker can
 * answer, by a pass the unresolved outcome asks for: the schedule here is an hour, so only the nudge can do it.
 */
let h: EngineHarness;
afterEach(async () => h?.close());

/**
 * Each test boots its own engine and store, and that boot was most of its time: an in-memory store ran initdb in
 * WebAssembly (up to 19 s with other tests beside it; it loads the build's template now, about 1 s), while the
 * settle the test is about took 0.3 s from the Master's order. The 20 s default left no room on a loaded machine.
 */
const BOOTS_A_STORE = { timeout: 60_000 };

describe('an unresolved copy is settled at once, not on the schedule', BOOTS_A_STORE, () => {
  it('timed out and not found by the first lookup: confirmed by the nudged pass', async () => {
    const broker = new SimBroker({ seed: 2 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    await h.start();
    const slave = g.slaves[0]!;
    // A first copy warms the Slave's instrument cache, so the read fault below hits the lookup, not the sizing.
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'by-hand-1',
    });
    await h.idle();
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_after_apply', accountId: slave.sim });
    broker.faults.inject({ op: 'read', kind: 'reset', accountId: slave.sim });
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'by-hand-2',
    });
    await expect
      .poll(async () => (await h.store.trades.listTrades(g.userId, { limit: 5 })).length, { timeout: 20_000 })
      .toBe(2);
    const [trade] = await h.store.trades.listTrades(g.userId, { limit: 5 });
    await expect
      .poll(async () => (await h.store.trades.intentsOfTrade(trade!.id))[0]?.state, { timeout: 20_000 })
      .toBe('confirmed');
    const [row] = await h.store.trades.intentsOfTrade(trade!.id);
    expect(row!.outcome).toMatchObject({ kind: 'confirmed' });
    expect(broker.positions(slave.sim)).toHaveLength(2);
  });
});

describe('a copy refused for the broker rate limit', BOOTS_A_STORE, () => {
  it("is sent again after the broker's hint while fresh, and confirmed once", async () => {
    const broker = new SimBroker({ seed: 4 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    await h.start();
    const slave = g.slaves[0]!;
    broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 0.05, accountId: slave.sim, times: 2 });
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'by-hand',
    });
    await h.idle();
    const [trade] = await h.store.trades.listTrades(g.userId, { limit: 5 });
    const [row] = await h.store.trades.intentsOfTrade(trade!.id);
    expect(row).toMatchObject({ state: 'confirmed' });
    expect(broker.positions(slave.sim)).toHaveLength(1);
  });

  it('a stale copy is not sent again: the refusal is its outcome', async () => {
    const broker = new SimBroker({ seed: 4 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: { maxDelayMs: 1000 } }] });
    await h.start();
    const slave = g.slaves[0]!;
    broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 5, accountId: slave.sim });
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'by-hand',
    });
    await h.idle();
    const [trade] = await h.store.trades.listTrades(g.userId, { limit: 5 });
    const [row] = await h.store.trades.intentsOfTrade(trade!.id);
    expect(row).toMatchObject({ state: 'rejected' });
    expect(broker.positions(slave.sim)).toHaveLength(0);
  });
});
