import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/simulator/broker.js';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerAdapter } from '../../src/platforms/adapter.js';
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
