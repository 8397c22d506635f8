import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { replayWhatIf } from '../../src/engine/what-if/replay.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { engineOnStore, seedGroup, storeCases } from './copy-harness.js';

/**
 * The copy rule's filters on the Master's trade, end to end on both stores: a Master trade placed with a magic
 * number and a comment reaches the planner through the watcher; each Slave's row is sent or skipped by its own
 * filter with the reason; the trade keeps its magic number and comment (migration 0028), so a what-if replay of a
 * candidate filter skips as the planner would.
 */
const stores = await storeCases();

describe.each(stores)('side, magic and comment filters (%s store)', (_name, db) => {
  const broker = new SimBroker({ seed: 7 });
  const engine = engineOnStore(db, broker);

  it('each Slave by its own filter; the trade keeps magic and comment; a replay of a new filter skips', async () => {
    const g = await seedGroup(engine().store, broker, {
      slaves: [
        { rule: {} },
        { rule: { sides: 'sell' } },
        { rule: { includeMagic: [1001] } },
        { rule: { excludeMagic: [1001] } },
        { rule: { includeComments: ['grid'] } },
        { rule: { excludeComments: ['GRID'] } },
      ],
    });
    await engine().watcher.stop();
    await engine().start();
    broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.5'),
      tag: newId('int'),
      magic: 1001,
      comment: 'Grid EA v2',
    });
    await engine().idle();
    const [trade] = await engine().store.trades.listTrades(g.userId, { limit: 5 });
    const rows = new Map((await engine().store.trades.intentsOfTrade(trade!.id)).map((r) => [r.slaveAccountId, r]));
    const outcome = g.slaves.map((s) => {
      const r = rows.get(s.account.id)!;
      return r.state === 'skipped' ? r.skipReason : r.state;
    });
    expect(outcome).toEqual([
      'confirmed',
      "side_filtered: the Master's trade is a buy; the rule copies sells only",
      'confirmed',
      "magic_excluded: magic number 1001 is in the rule's excludeMagic",
      'confirmed',
      'comment_excluded: the comment "Grid EA v2" contains "GRID"',
    ]);
    expect(broker.positions(g.slaves[1]!.sim)).toEqual([]);
    expect(broker.positions(g.slaves[2]!.sim)).toHaveLength(1);

    // The preview's read: the trade as recorded, with the Master's magic number and comment.
    const free = g.slaves[0]!.account;
    const history = await engine().store.replayHistory.read(free.id, new Date(0));
    expect(history.rows.map((r) => [r.trade.masterMagic, r.trade.masterComment])).toEqual([[1001, 'Grid EA v2']]);
    const replay = (rule: Parameters<typeof withDefaults>[0]) =>
      replayWhatIf({
        slave: free,
        masters: new Map([[g.master.id, g.master]]),
        candidate: withDefaults(rule),
        rows: history.rows,
        masterTrades: history.masterTrades,
      }).copies[0]!.candidate.skipReason;
    expect(replay({ excludeMagic: [1001] })).toBe('magic_excluded');
    expect(replay({ includeComments: ['scalper'] })).toBe('comment_not_included');
    expect(replay({ sides: 'sell' })).toBe('side_filtered');
    expect(replay({ includeMagic: [1001], includeComments: ['grid'], sides: 'buy' })).toBeNull();
  }, 30_000);
});
