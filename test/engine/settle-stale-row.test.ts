import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { TagLookup } from '../../src/platforms/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

let h: EngineHarness;
afterEach(async () => h?.close());

/**
 * Seen in a soak: "settling an intent failed: ... cannot go from confirmed to confirmed", logged as an error 46-78
 * times in 12 minutes. A settle pass reads the unsettled rows once, at its start; a write whose answer took longer
 * than the grace was then finished by the engine (outcome written, row let go) before the pass reached it. The
 * pass settled it from the row as it had read it: a useless tag lookup at the broker, then an outcome the store
 * refused. Here the pass is handed the row as it was while the write was on the wire; by then it is confirmed.
 */
describe('a settle pass reaching a row the engine has settled since the pass read it', () => {
  it('leaves it alone: no broker lookup, no failed write, the outcome as the engine wrote it', async () => {
    const broker = new SimBroker({ seed: 11 });
    broker.setPrice('EURUSD', '1.10000');
    h = await startEngine({ broker });
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    await h.start();
    broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: 'm1' });
    await h.idle();
    const [trade] = await h.store.trades.listTrades(g.userId, { limit: 1 });
    const [done] = await h.store.trades.intentsOfTrade(trade!.id);
    expect(done!.state).toBe('confirmed');

    // The pass's read, taken while the write was still on the wire.
    const trades = h.store.trades;
    const read = trades.unsettledIntents.bind(trades);
    trades.unsettledIntents = async () => [
      ...(await read()),
      { intent: { ...done!, state: 'sent', updatedAt: new Date(done!.updatedAt.getTime() - 5_000) }, trade: trade! },
    ];
    const adapter = await h.adapters.forAccount(g.slaves[0]!.account);
    let lookups = 0;
    const findByTag = adapter.findByTag.bind(adapter);
    adapter.findByTag = async (tag: string): Promise<TagLookup> => {
      lookups++;
      return findByTag(tag);
    };
    const tagIndex = adapter.tagIndex?.bind(adapter);
    if (tagIndex)
      adapter.tagIndex = async (since: Date) => {
        lookups++;
        return tagIndex(since);
      };

    const report = await h.settler.runOnce({ graceMs: 0 });
    expect(report.unknown).toBe(0);
    expect(report.checked).toBe(0);
    expect(lookups).toBe(0);
    expect(await trades.intentById(done!.id)).toEqual(done);
  });
});
