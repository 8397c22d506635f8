import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { newId } from '../../src/domain/ids.js';
import { dec } from '../../src/domain/decimal.js';
import { intentRow, seedAccounts } from '../helpers/store-seed.js';

/** The copy hot path's statement budget (issue 12): counted through the store's driver hook. */
describe('statements per fan-out', () => {
  let store: Store;
  const seen: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ct-statements-'));
  beforeAll(async () => {
    // A data dir starts from the build's template (no initdb); fsync off: what is counted is statements.
    store = await Store.open({ dataDir: dir, embeddedFsync: false, onStatement: (q) => seen.push(q) });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a watcher fan-out in one statement and writes its outcomes in a number of statements that does not grow with the Slaves', async () => {
    const { userId, master: m, slaves } = await seedAccounts(store, 'st', 40);
    const tradeId = newId('trd');
    const rows = slaves.map((s) => intentRow(tradeId, s.id));
    const item = {
      accountId: m.id,
      kind: 'position' as const,
      itemId: 'mp1',
      symbol: 'EURUSD',
      side: 'buy' as const,
      orderType: 'market' as const,
      volume: dec('1'),
    };
    const trade = {
      id: tradeId,
      userId,
      masterAccountId: m.id,
      source: 'watcher',
      action: 'open',
      symbol: 'EURUSD',
      side: 'buy' as const,
      orderType: 'market' as const,
      volume: dec('1'),
      tag: newId('act'),
      status: 'recorded',
      actionId: `${m.id}:mp1:open:1`,
    };
    seen.length = 0;
    expect(await store.trades.recordAction(trade, rows, [item])).toBe(true);
    expect(seen).toHaveLength(1);
    expect((await store.trades.intentsOfTrade(tradeId)).length).toBe(40);
    expect((await store.trades.masterItem(m.id, 'position', 'mp1'))?.volume.toString()).toBe('1');
    // The same action again (a replay): nothing written, no second trade.
    const again = newId('trd');
    const replayed = rows.map((r) => ({ ...r, tradeId: again }));
    expect(await store.trades.recordAction({ ...trade, id: again, tag: newId('act') }, replayed, [item])).toBe(false);

    seen.length = 0;
    await store.trades.applyOutcomes([
      { trade: { id: tradeId, set: { status: 'accepted' } } },
      ...rows.map((r, i) => ({
        intentId: r.id,
        update: { state: 'confirmed' as const, brokerOrderId: `o${i}` },
        links: [
          {
            op: 'upsert' as const,
            link: {
              id: newId('act'),
              kind: 'position' as const,
              masterAccountId: m.id,
              masterPositionId: 'mp1',
              slaveAccountId: r.slaveAccountId,
              slavePositionId: `sp${i}`,
              intentId: r.id,
              volume: dec('0.1'),
            },
          },
        ],
        events: [{ userId, accountId: r.slaveAccountId, type: 'copy.confirmed', payload: {} }],
      })),
    ]);
    // The trade's move, the intents, the links, the event counters and the events.
    expect(seen).toHaveLength(5);
    expect((await store.trades.openLinksOfMasterAccount(m.id)).length).toBe(40);
    expect((await store.trades.intentsInState('confirmed')).length).toBe(40);
  }, 60_000);
});
