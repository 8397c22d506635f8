import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * Issue 12 (the soak): a reconcile pass used to read every link its Master ever had, one row per copy kept for
 * ever (45,000 after 30 minutes at 100 Slaves, a 1.3-1.9 s read every pass). It reads the open links and those
 * of the Master positions open now; what it decides must not change.
 */
describe('a reconcile pass and the links of positions closed long ago', () => {
  const live: EngineHarness[] = [];
  afterEach(async () => {
    for (const h of live.splice(0)) await h.close();
  });

  /** Counts the link rows the store hands out (every trades method whose name speaks of links). */
  function countLinkRows(h: EngineHarness): { rows: number } {
    const seen = { rows: 0 };
    const trades = h.store.trades as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(trades))) {
      if (!/link/i.test(name) || typeof trades[name] !== 'function') continue;
      const fn = trades[name]!.bind(trades);
      trades[name] = async (...a: unknown[]) => {
        const r = await fn(...a);
        if (Array.isArray(r)) seen.rows += r.length;
        return r;
      };
    }
    return seen;
  }

  async function withHistory(rounds: number) {
    const broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    const h = await startEngine({ broker });
    live.push(h);
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
    await h.start();
    const master = (await h.store.accounts.byId(g.master.id))!;
    let n = 0;
    const open = () =>
      broker.placeOrder(g.masterSim, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: `manual-${n++}`,
      });
    for (let i = 0; i < rounds; i++) {
      const r = open();
      await h.idle();
      broker.closePosition(g.masterSim, r.position!.id);
      await h.idle();
    }
    const now = open();
    await h.idle();
    return { broker, g, h, master, masterPositionId: now.position!.id };
  }

  it('reads the open links, not the closed ones of positions gone on both sides, and finds no drift', {
    timeout: 60_000,
  }, async () => {
    const { g, h, master } = await withHistory(10);
    const all = await h.store.trades.linksOfMasterAccount(g.master.id);
    expect(all.filter((l) => !l.open)).toHaveLength(20);
    expect(all.filter((l) => l.open)).toHaveLength(2);
    const seen = countLinkRows(h);
    const r = await h.reconciler.run(master, { dryRun: true });
    expect(r.drift).toEqual([]);
    expect(seen.rows).toBe(2);
  });

  it('a copy still held whose link our books closed, its Master position gone, is judged as before: no drift', {
    timeout: 60_000,
  }, async () => {
    const { broker, g, h, master, masterPositionId } = await withHistory(2);
    const [s0, s1] = g.slaves;
    // The watcher stops, the Master position goes at the broker, our books close one Slave's link (its close
    // written, the Slave's position still held): that held copy is named only by a closed link of a gone position.
    await h.watcher.stop();
    broker.closePosition(g.masterSim, masterPositionId);
    const [link] = await h.store.trades.openLinksOfSlave(s0!.account.id);
    await h.store.trades.closeLink(link!.id, 'master_closed');
    expect(broker.positions(s0!.sim)).toHaveLength(1);
    const seen = countLinkRows(h);
    const r = await h.reconciler.run(master, { dryRun: true });
    expect(r.drift.filter((d) => d.slaveAccountId === s0!.account.id)).toEqual([]);
    // The other Slave's copy still has its open link: an orphan of a gone Master position, as ever.
    expect(r.drift.filter((d) => d.slaveAccountId === s1!.account.id).map((d) => d.kind)).toEqual(['orphan']);
    // Read: the open link (the other Slave's) and the held copy's closed one, not the four of the earlier rounds.
    expect(seen.rows).toBe(2);
  });
});
