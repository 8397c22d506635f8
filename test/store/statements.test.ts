import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { newId } from '../../src/domain/ids.js';
import { dec } from '../../src/domain/decimal.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { AdapterRegistry } from '../../src/engine/adapter-registry.js';
import { groupSlaves } from '../../src/engine/group-slaves.js';

const pgAvailable = await requirePostgres();
let groups = 0;

/**
 * A watcher copy's statements before its last hand-off, split into the planning read (the group's Slaves with
 * their rules, through the engine's own `groupSlaves`) and the record; each read twice, so a cache shows.
 */
async function copyStatements(store: Store, seen: string[]): Promise<{ reads: number[]; record: number }> {
  const { userId, master: m, slaves } = await seedAccounts(store, `cs${++groups}-`, 30);
  const g = await store.accounts.createGroup(userId, 'g');
  await store.accounts.setRoleAndGroup(m.id, 'master', g.id);
  for (const s of slaves) await store.accounts.setRoleAndGroup(s.id, 'slave', g.id);
  const master = (await store.accounts.byId(m.id))!;
  const adapters = new AdapterRegistry({ open: async () => null });
  const reads: number[] = [];
  for (let i = 0; i < 2; i++) {
    seen.length = 0;
    // Every Slave of the group, whatever the order: ids made in the same millisecond do not sort as they were made.
    expect((await groupSlaves(store, adapters, master)).map((s) => s.account.id).sort()).toEqual(
      slaves.map((s) => s.id).sort(),
    );
    reads.push(seen.length);
  }
  const trade = tradeRow(userId, m.id, { actionId: `${m.id}:mp1:open:1` });
  seen.length = 0;
  expect(
    await store.trades.recordAction(
      trade,
      slaves.map((s) => intentRow(trade.id, s.id)),
      [],
    ),
  ).toBe(true);
  return { reads, record: seen.length };
}

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
    // The trade's move, the intents, the links, the event counters and the events; then, committed, the intents'
    // move from the record's narrow table to copy_intents proper.
    expect(seen).toHaveLength(6);
    expect(seen[5]).toMatch(/delete from copy_intents_recent/);
    expect((await store.trades.openLinksOfMasterAccount(m.id)).length).toBe(40);
    expect((await store.trades.intentsInState('confirmed')).length).toBe(40);
  }, 60_000);

  it("plans a copy from the store's caches: the record is the only statement before the hand-off", async () => {
    // The first read fills the caches; every later copy reads nothing.
    expect(await copyStatements(store, seen)).toEqual({ reads: [2, 0], record: 1 });
  }, 60_000);
});

describe.runIf(pgAvailable)('statements per fan-out, PostgreSQL', () => {
  let store: Store;
  let drop: () => Promise<void>;
  const seen: string[] = [];
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, onStatement: (q) => seen.push(q) });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it("reads the group's Slaves with their rules in one statement, then records in one: 2 before the hand-off", async () => {
    // Other processes write accounts and rules: every copy asks, in one statement that sends rows only when they
    // changed (the second read here sends none).
    expect(await copyStatements(store, seen)).toEqual({ reads: [1, 1], record: 1 });
  }, 60_000);
});
