import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/simulator/broker.js';
import { dec } from '../../src/domain/decimal.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * A write that timed out and was then proven absent is resent only to a Slave that still copies. Seen in the chaos
 * test under load: a panic-close job locked the group and closed every position while the settle pass resent
 * opens that had timed out before the lock, so positions came back round after round and the job ended `failed`.
 * A Slave the user or a panic-close stopped (paused, locked, disabled) gets no new exposure from a resend: the row
 * ends rejected with the reason, as the planner would have skipped it.
 */
let h: EngineHarness;
afterEach(async () => {
  await h?.close();
});

describe('the settle pass and a Slave stopped after its write timed out', () => {
  for (const status of ['locked', 'paused'] as const) {
    it(`does not resend an open to a Slave ${status} meanwhile: rejected with the reason, nothing opened`, {
      timeout: 120_000,
    }, async () => {
      const broker = new SimBroker({ seed: 7 });
      broker.setPrice('EURUSD', '1.10000');
      h = await startEngine({ broker });
      const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
      await h.start();
      // Settled by hand below, not by the nudge an unresolved outcome gives.
      h.engine.onUnresolved = () => undefined;
      const s = g.slaves[0]!;
      const open = (tag: string) =>
        broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag });
      open('warm');
      await h.idle();
      expect(broker.positions(s.sim)).toHaveLength(1);

      broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: s.sim });
      open('first');
      const rowOf = async () => {
        const [t] = await h.store.trades.listTrades(g.userId, { limit: 1 });
        return t
          ? (await h.store.trades.intentsOfTrade(t.id)).find((r) => r.slaveAccountId === s.account.id)
          : undefined;
      };
      await expect.poll(async () => (await rowOf())?.state, { timeout: 20_000 }).toBe('unresolved');
      expect(await h.store.accounts.setStatusIf(s.account.id, 'connected', status, 'stopped by the test')).toBe(true);

      await h.settler.runOnce({ graceMs: 0 });
      await h.idle();
      const row = await rowOf();
      expect(row?.state).toBe('rejected');
      expect(JSON.stringify(row?.outcome)).toContain('slave_not_eligible');
      expect(broker.positions(s.sim)).toHaveLength(1);
    });
  }
});
