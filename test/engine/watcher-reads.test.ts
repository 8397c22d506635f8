import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * Issue 12: between a Master's fill and the first Slave's send, every statement is a round trip to the store the
 * copy waits for (5-8 ms each on the loaded bench machine, where one read after another made most of the service's
 * added time). Counted through the store's driver hook, at the moment the first Slave fills at the simulated broker.
 */
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;
const seen: string[] = [];

beforeAll(async () => {
  broker = new SimBroker({ seed: 12 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({ broker, onStatement: (q) => seen.push(q) });
  g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
  await h.start();
});
afterAll(async () => h?.close());

/** A tagged market fill of the Master (as another tool's order carries its own label); the statements sent until a Slave filled. */
async function statementsBeforeFirstSlaveFill(side: 'buy' | 'sell', tag: string): Promise<string[]> {
  const slaves = new Set(g.slaves.map((s) => s.sim));
  let before: string[] | null = null;
  const off = broker.onEvent((accountId, ev) => {
    if (!before && ev.kind === 'position_opened' && slaves.has(accountId)) before = [...seen];
  });
  seen.length = 0;
  broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side, type: 'market', volume: dec('0.1'), tag });
  await h.idle();
  off();
  expect(before).not.toBeNull();
  return before!;
}

describe('watcher: a Master fill reaches the Slaves after few store round trips', () => {
  it('reads the Master from the cache and the new position and its tag once each, then records in one statement', async () => {
    // Warm: the Master's list and the Slaves' rules cached, the instruments known.
    await statementsBeforeFirstSlaveFill('buy', 'other-tool-1');
    const stmts = await statementsBeforeFirstSlaveFill('sell', 'other-tool-2');
    // One read (the position's item, its tag's trade: none, its tag's intent: none, not one of our copies), then
    // the record. Before: the Master's row, the item, the tag's trade three times, the intent, the record (7);
    // then the item, the trade and the intent as three statements posted at once, and the record (4).
    expect(stmts.filter((q) => /from "accounts"/i.test(q))).toEqual([]);
    const reads = stmts.filter((q) => /^\s*select\b/i.test(q));
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatch(/"master_items"/);
    expect(reads[0]).toMatch(/"trades"/);
    expect(reads[0]).toMatch(/"copy_intents"/);
    expect(stmts.length).toBeLessThanOrEqual(2);
    const positions = g.slaves.map((s) => broker.positions(s.sim).length);
    expect(positions).toEqual([2, 2]);
  }, 60_000);
});
