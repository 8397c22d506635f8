import { afterEach, describe, expect, it, vi } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * Issue 43, items 2 and 8: a Master's next action must not wait for the previous action's outcomes. The watcher
 * planned each action only after every copy of the one before had its answer, so one slow Slave (a broker holding a
 * write, answering 429) held every other Slave's copy of the Master's next trade: seen as three Slaves breaching a
 * 1 s latency target when only one broker was slow. Follow-ups of the same Master item still wait for that item's
 * copies (they plan from the links those outcomes write); actions on other items go at once.
 *
 * The slow broker is a 429 whose wait the test holds open (the engine's injected sleep), not a wall-clock delay.
 */
let h: EngineHarness;
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  await h?.close();
});

const BOOTS_A_STORE = { timeout: 60_000 };

describe('one slow Slave does not hold the Master’s other trades', BOOTS_A_STORE, () => {
  it('while a Slave broker holds the copy of position P, every Slave gets the copy of the Master’s next position Q', async () => {
    const broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    const held = new Promise<void>((r) => {
      release = r;
    });
    let waiting = 0;
    h = await startEngine({
      broker,
      sleep: async () => {
        waiting++;
        await held;
      },
    });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
    const [slow, quick] = g.slaves as [(typeof g.slaves)[0], (typeof g.slaves)[0]];
    await h.start();
    const buy = (volume: string, tag: string) =>
      broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec(volume), tag })
        .position!;

    broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 2, accountId: slow.sim });
    const p = buy('0.1', 'by-hand-p');
    await vi.waitFor(() => expect(waiting).toBe(1), { timeout: 20_000, interval: 20 });
    expect(broker.positions(quick.sim).map((x) => x.volume.toString())).toEqual(['0.1']);

    buy('0.2', 'by-hand-q');
    // Q's copies are sent while the slow broker still holds P's: the quick Slave and the slow one's own connection.
    await vi.waitFor(
      () => {
        expect(
          broker
            .positions(quick.sim)
            .map((x) => x.volume.toString())
            .sort(),
        ).toEqual(['0.1', '0.2']);
        expect(broker.positions(slow.sim).map((x) => x.volume.toString())).toEqual(['0.2']);
      },
      { timeout: 20_000, interval: 20 },
    );
    expect(waiting).toBe(1);

    release!();
    await h.idle();
    expect(
      broker
        .positions(slow.sim)
        .map((x) => x.volume.toString())
        .sort(),
    ).toEqual(['0.1', '0.2']);

    // A follow-up of P plans from P's links: it still comes after P's copies, on both Slaves.
    broker.closePosition(g.masterSim, p.id);
    await h.idle();
    for (const s of [slow, quick])
      expect(
        broker.positions(s.sim).map((x) => x.volume.toString()),
        s.account.id,
      ).toEqual(['0.2']);
    const trades = await h.store.trades.tradesOfMasterPosition(g.master.id, p.id);
    const close = trades.find((t) => t.action === 'close')!;
    const rows = await h.store.trades.intentsOfTrade(close.id);
    expect(rows.map((r) => r.state).sort()).toEqual(['confirmed', 'confirmed']);
  });
});
