import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/simulator/broker.js';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import type { BrokerAdapter, TagLookup } from '../../src/platforms/adapter.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * A settle pass does not wait for a resend's answer before the next pass may start. Seen under a burst on a loaded
 * machine: one pass held every Slave's settling for the slowest connection's resends, and writes that timed out
 * meanwhile waited for it until their action was older than the rule's limit (`stale_unresolved`), copies lost.
 * Here Slave 1's resend is held at its broker until the test lets it go; Slave 2's write that times out meanwhile
 * is settled (found absent, resent, confirmed) while Slave 1's resend is still on the wire, and neither is copied
 * twice. The schedule is an hour: only the nudge an unresolved outcome gives can do it.
 */
let h: EngineHarness;
let release: () => void = () => undefined;
afterEach(async () => {
  release();
  await h?.close();
});

describe('a resend on the wire does not hold the settling of other writes', () => {
  it("Slave 2's timed-out copy is settled while Slave 1's resend waits at its broker", {
    timeout: 120_000,
  }, async () => {
    const broker = new SimBroker({ seed: 3 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
    await h.start();
    const [s1, s2] = g.slaves as [(typeof g.slaves)[0], (typeof g.slaves)[0]];
    const open = (tag: string) =>
      broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag });
    // Warms both Slaves' adapters and instrument specs.
    open('warm');
    await h.idle();

    // Slave 1: the next write times out before the broker applies it; the write after it (the settler's resend,
    // once the lookup proved the first absent) waits for `release`.
    const a1: BrokerAdapter = await h.adapters.forAccount(s1.account);
    const place = a1.placeOrder.bind(a1);
    let calls = 0;
    let resendAnswered = false;
    const held = new Promise<void>((r) => (release = r));
    a1.placeOrder = async (req) => {
      if (++calls !== 2) return place(req);
      await held;
      const o = await place(req);
      resendAnswered = true;
      return o;
    };
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: s1.sim });
    open('first');
    const tradeOf = async (n: number) => (await h.store.trades.listTrades(g.userId, { limit: 10 })).length >= n;
    await expect.poll(() => tradeOf(2), { timeout: 20_000 }).toBe(true);
    const [first] = await h.store.trades.listTrades(g.userId, { limit: 1 });
    const rowOf = async (tradeId: string, slaveId: string) =>
      (await h.store.trades.intentsOfTrade(tradeId)).find((r) => r.slaveAccountId === slaveId);
    // The resend is on the wire (attempt 2, held at the broker).
    await expect.poll(async () => calls, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    expect(await rowOf(first!.id, s1.account.id)).toMatchObject({ state: 'sent', attempts: 2 });

    // Slave 2's next write times out and is not applied: only a settle pass can copy it.
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: s2.sim });
    open('second');
    await expect.poll(() => tradeOf(3), { timeout: 20_000 }).toBe(true);
    const [second] = await h.store.trades.listTrades(g.userId, { limit: 1 });
    expect(second!.id).not.toBe(first!.id);
    await expect
      .poll(async () => (await rowOf(second!.id, s2.account.id))?.state, { timeout: 20_000 })
      .toBe('confirmed');
    expect(await rowOf(second!.id, s2.account.id)).toMatchObject({ attempts: 2 });
    // ... while Slave 1's resend is still held.
    expect(resendAnswered).toBe(false);
    expect(await rowOf(first!.id, s1.account.id)).toMatchObject({ state: 'sent', attempts: 2 });

    release();
    await expect
      .poll(async () => (await rowOf(first!.id, s1.account.id))?.state, { timeout: 20_000 })
      .toBe('confirmed');
    await h.idle();
    // warm, first (once, by the resend), second: no copy twice.
    expect(broker.positions(s1.sim)).toHaveLength(3);
    expect(broker.positions(s2.sim)).toHaveLength(3);
    const report = await h.settler.runOnce({ graceMs: 0 });
    expect(report.checked).toBe(0);
  });
});

describe('a burst of writes that time out on one connection', () => {
  it('is looked up once for all by the settle pass, not once per write, and each copy is confirmed once', {
    timeout: 120_000,
  }, async () => {
    const N = 4;
    const broker = new SimBroker({ seed: 5 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    await h.start();
    const slave = g.slaves[0]!;
    const orders = new OrderService(h.store, h.adapters, h.engine);
    const order = (i: number) =>
      orders.send(
        g.userId,
        g.master.id,
        {
          symbol: 'EURUSD',
          side: 'buy',
          volume: dec('0.1'),
          type: 'market',
          price: null,
          stopLoss: null,
          takeProfit: null,
        },
        `req_${i}`,
      );
    await order(0);
    await h.idle();

    // The Slave's adapter reads all its tags at once, like the REST and cTrader ones (the sim one has no tagIndex);
    // its writes wait until the whole burst is on the wire, then each times out unapplied.
    const a: BrokerAdapter = await h.adapters.forAccount(slave.account);
    let perTag = 0;
    let indexReads = 0;
    const findByTag = a.findByTag.bind(a);
    a.findByTag = (tag) => {
      perTag++;
      return findByTag(tag);
    };
    a.tagIndex = async () => {
      indexReads++;
      const index = new Map<string, TagLookup>();
      for (const o of await a.listOrders({ includeHistory: true }))
        if (o.tag) index.set(o.tag, { found: true, order: o });
      for (const p of await a.listPositions()) if (p.tag) index.set(p.tag, { found: true, position: p });
      return index;
    };
    const place = a.placeOrder.bind(a);
    let waiting = 0;
    let go!: () => void;
    const all = new Promise<void>((r) => (go = r));
    release = go;
    let gated = N;
    a.placeOrder = async (req) => {
      if (gated-- > 0) {
        if (++waiting === N) go();
        await all;
      }
      return place(req);
    };
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: slave.sim, times: N });
    await Promise.all(Array.from({ length: N }, (_, i) => order(i + 1)));

    const trades = (await h.store.trades.listTrades(g.userId, { limit: 10 })).slice(0, N);
    expect(trades).toHaveLength(N);
    const rows = async () => (await Promise.all(trades.map((t) => h.store.trades.intentsOfTrade(t.id)))).flat();
    await expect
      .poll(async () => (await rows()).map((r) => r.state), { timeout: 60_000 })
      .toEqual(Array(N).fill('confirmed'));
    // Found absent by one reading of the Slave's tags, then sent again under a new tag, once each.
    expect((await rows()).map((r) => r.attempts)).toEqual(Array(N).fill(2));
    // The last write to time out had the connection to itself: one lookup of its own is fine, one each is not.
    expect(perTag).toBeLessThanOrEqual(1);
    expect(indexReads).toBeGreaterThanOrEqual(1);
    await h.idle();
    expect(broker.positions(slave.sim)).toHaveLength(N + 1);
  });
});
