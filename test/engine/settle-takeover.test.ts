import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerAdapter } from '../../src/platforms/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { type EngineHarness, seedGroup, startEngine } from './copy-harness.js';

/**
 * Issue 43: a worker that takes a Master over settles what the last owner left before it watches the Master. It
 * waited for the settle pass already running (over its other Masters) first: in the chaos run that pass's lookups
 * and resends held the takeover 5 to 7.5 s before the first copy. Here Master A's pass is held at its Slave's
 * broker; the takeover settle of Master B is done meanwhile, and nothing is copied twice.
 */
let h: EngineHarness;
let release: () => void = () => undefined;
afterEach(async () => {
  release();
  await h?.close();
});

describe('the settle of a Master taken over', () => {
  it('does not wait for a pass over other Masters held at a slow broker', { timeout: 60_000 }, async () => {
    const broker = new SimBroker({ seed: 4 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const a = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    const b = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    await h.start();
    const open = (sim: string, tag: string) =>
      broker.placeOrder(sim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag });
    open(a.masterSim, 'warm-a');
    open(b.masterSim, 'warm-b');
    await h.idle();

    // Slave A's copy times out unapplied; the settle pass that looks it up waits at the broker for `release`.
    const sa: BrokerAdapter = await h.adapters.forAccount(a.slaves[0]!.account);
    const held = new Promise<void>((r) => (release = r));
    let lookedUp = false;
    const find = sa.findByTag.bind(sa);
    sa.findByTag = async (tag) => {
      lookedUp = true;
      await held;
      return find(tag);
    };
    const index = sa.tagIndex?.bind(sa);
    if (index)
      sa.tagIndex = async (since) => {
        lookedUp = true;
        await held;
        return index(since);
      };
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: a.slaves[0]!.sim });
    open(a.masterSim, 'a1');
    await expect.poll(() => lookedUp, { timeout: 20_000 }).toBe(true);

    // Master B's copy times out too (as one the last owner left unknown when it died).
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: b.slaves[0]!.sim });
    open(b.masterSim, 'b1');
    const rowsOfB = async () =>
      (await h.store.trades.listTrades(b.userId, { limit: 10 })).length >= 2
        ? (await h.store.trades.intentsOfTrade((await h.store.trades.listTrades(b.userId, { limit: 1 }))[0]!.id))[0]
        : undefined;
    await expect.poll(async () => (await rowsOfB())?.state, { timeout: 20_000 }).toBe('unresolved');

    // Taken over: settled at once (found absent, sent again, confirmed) while A's pass still waits at its broker.
    await h.settler.settleTakenOver([b.master.id]);
    expect(await rowsOfB()).toMatchObject({ state: 'confirmed', attempts: 2 });
    expect(broker.positions(b.slaves[0]!.sim)).toHaveLength(2);
    expect(broker.positions(a.slaves[0]!.sim)).toHaveLength(1);

    release();
    await h.quiesce([a.master, b.master]);
    expect(broker.positions(a.slaves[0]!.sim)).toHaveLength(2);
    expect(broker.positions(b.slaves[0]!.sim)).toHaveLength(2);
  });
});
