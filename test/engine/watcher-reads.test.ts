import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { correlationTag } from '../../src/domain/correlation.js';
import { seedGroup, startEngine, storeCases, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * Issue 12: between a Master's fill and the first Slave's send, every statement is a round trip to the store the
 * copy waits for (5-8 ms each on the loaded bench machine, where one read after another made most of the service's
 * added time). Counted through the store's driver hook, at the moment the first Slave fills at the simulated broker.
 */

const cases = await storeCases();

describe.each(cases)(
  'watcher on the %s store: a Master fill reaches the Slaves after few store round trips',
  (kind, open) => {
    let broker: SimBroker;
    let h: EngineHarness;
    let g: SeededGroup;
    let drop: () => Promise<void> = async () => undefined;
    const seen: string[] = [];

    beforeAll(async () => {
      const c = await open();
      drop = c.drop;
      broker = new SimBroker({ seed: 12 });
      broker.setPrice('EURUSD', '1.10000');
      h = await startEngine({
        broker,
        ...(c.dataDir ? { dataDir: c.dataDir } : {}),
        ...(c.databaseUrl ? { databaseUrl: c.databaseUrl } : {}),
        onStatement: (q) => seen.push(q),
      });
      g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
      await h.start();
      // Warm: the Master's list and the Slaves' rules cached, the instruments known.
      await statementsBeforeFirstSlaveFill('buy', 'other-tool-1');
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      await drop();
    });

    /** A Master market fill (tagged as another tool's order carries its own label, or not); the statements sent until a Slave filled. */
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

    const reads = (stmts: string[]) => stmts.filter((q) => /^\s*select\b/i.test(q));

    it("another tool's tag, and no tag: the record alone on the embedded store; the item still read on PostgreSQL", async () => {
      for (const tag of ['other-tool-2', '']) {
        const stmts = await statementsBeforeFirstSlaveFill('sell', tag);
        if (kind === 'embedded') {
          // The item from memory, the tag not shaped like ours: nothing to read. Before: one read (the item, and the
          // tag's trade and intent when tagged), then the record.
          expect(reads(stmts)).toEqual([]);
          expect(stmts).toHaveLength(1);
        } else {
          // Several processes write PostgreSQL (and its accounts are not cached): the item is read, the tag is not.
          const items = reads(stmts).filter((q) => /"master_items"/.test(q));
          expect(items).toHaveLength(1);
          expect(items[0]).not.toMatch(/"trades"|"copy_intents"/);
        }
        expect(stmts.filter((q) => /"trades"|"copy_intents"/.test(q) && /^\s*select\b/i.test(q))).toEqual([]);
        expect(stmts.at(-1)).toMatch(/insert into trades/i);
      }
      expect(g.slaves.map((s) => broker.positions(s.sim).length)).toEqual([3, 3]);
    }, 60_000);

    it('a tag shaped like ours that nothing carries: its trade and intent read in one statement, then the record', async () => {
      const tag = correlationTag({ tradeId: 'trd_elsewhere', accountId: 'acc_elsewhere', action: 'open' });
      const stmts = await statementsBeforeFirstSlaveFill('buy', tag);
      const tagReads = reads(stmts).filter((q) => /"trades"|"copy_intents"/.test(q));
      // The trade and the intent carrying it now, then the earlier attempts' tags (a copy of ours resent).
      expect(tagReads).toHaveLength(2);
      expect(tagReads[0]).toMatch(/"trades"/);
      expect(tagReads[0]).toMatch(/"copy_intents"/);
      expect(tagReads[1]).toMatch(/"prev_tags"/);
      if (kind === 'embedded') {
        // The item is in memory; nothing else is read.
        expect(reads(stmts)).toEqual(tagReads);
        expect(tagReads[0]).not.toMatch(/"master_items"/);
        expect(stmts).toHaveLength(3);
      } else expect(tagReads[0]).toMatch(/"master_items"/);
      expect(stmts.at(-1)).toMatch(/insert into trades/i);
      expect(g.slaves.map((s) => broker.positions(s.sim).length)).toEqual([4, 4]);
    }, 60_000);
  },
);
