import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { MasterItem, NewMasterItem } from '../../src/domain/ledger-types.js';
import { TradesRepo } from '../../src/store/repos/trades.js';
import { Store } from '../../src/store/store.js';
import { intentRow, seedAccounts, tradeRow } from '../helpers/store-seed.js';

/**
 * The embedded store keeps each Master's items in memory (it is the only writer). Whatever the writes, a read
 * from memory must give what the table holds, and a write that did not commit must leave nothing behind.
 */
let store: Store;
/** The same tables read with no cache: what the memory must agree with. */
let table: TradesRepo;
const seen: string[] = [];
let keys = 0;

beforeAll(async () => {
  store = await Store.open({ dataDir: ':memory:', embeddedFsync: false, onStatement: (q) => seen.push(q) });
  table = new TradesRepo(store.database.db, store.events);
}, 60_000);
afterAll(async () => store?.close());

/** An item as compared: decimals as text, `updated_at` left out (the database's clock, not the process's). */
const plain = (it: MasterItem | null) =>
  it && {
    ...it,
    volume: it.volume.toString(),
    price: it.price?.toString() ?? null,
    stopLoss: it.stopLoss?.toString() ?? null,
    takeProfit: it.takeProfit?.toString() ?? null,
    updatedAt: undefined,
  };
const sorted = (its: MasterItem[]) =>
  its.map(plain).sort((a, b) => `${a!.kind}${a!.itemId}`.localeCompare(`${b!.kind}${b!.itemId}`));

/** Every item of the account, and the open ones as a list, as the table has them; an unknown item is none. */
async function sameAsTable(accountId: string): Promise<void> {
  for (const it of await table.masterItems(accountId))
    expect(plain(await store.trades.masterItem(accountId, it.kind, it.itemId))).toEqual(plain(it));
  expect(sorted(await store.trades.masterItems(accountId, { openOnly: true }))).toEqual(
    sorted(await table.masterItems(accountId, { openOnly: true })),
  );
  expect(await store.trades.masterItem(accountId, 'position', 'never-seen')).toBeNull();
}

/** Statements sent while `fn` ran. */
async function statements(fn: () => Promise<unknown>): Promise<number> {
  seen.length = 0;
  await fn();
  return seen.length;
}

const item = (accountId: string, itemId: string, over: Partial<NewMasterItem> = {}): NewMasterItem => ({
  accountId,
  kind: 'position',
  itemId,
  symbol: 'EURUSD',
  side: 'buy',
  orderType: 'market',
  volume: dec('0.10'),
  ...over,
});

describe('Master items in memory on the embedded store', () => {
  it('are read once per account, then follow every committed write as the table has it', async () => {
    const { userId, master: m, slaves } = await seedAccounts(store, `mic${++keys}-`, 1);
    await store.trades.upsertMasterItem(item(m.id, 'p0', { tag: 'other-tool', stopLoss: dec('1.05') }));
    expect(await statements(() => store.trades.masterItems(m.id, { openOnly: true }))).toBe(1);
    expect(await statements(() => store.trades.masterItem(m.id, 'position', 'p0'))).toBe(0);
    expect(await statements(() => store.trades.masterItem(m.id, 'order', 'p0'))).toBe(0);
    expect(await statements(() => store.trades.itemAndTag(m.id, 'position', 'p0', null))).toBe(0);

    // An update that leaves columns out keeps them (tag, stop loss); a new row takes the defaults.
    await store.trades.upsertMasterItem(item(m.id, 'p0', { volume: dec('0.05'), open: false, seq: 3 }));
    await store.trades.upsertMasterItem(item(m.id, 'p1', { kind: 'order', orderType: 'limit', price: dec('1.1') }));
    await sameAsTable(m.id);
    expect(plain(await store.trades.masterItem(m.id, 'position', 'p0'))).toMatchObject({
      tag: 'other-tool',
      stopLoss: '1.05',
      volume: '0.05',
      open: false,
    });

    // The record's item (one statement), and not when the action was recorded already.
    const t = tradeRow(userId, m.id, { actionId: `${m.id}:p2:open:1` });
    expect(await store.trades.recordAction(t, [intentRow(t.id, slaves[0]!.id)], [item(m.id, 'p2', { seq: 1 })])).toBe(
      true,
    );
    const replay = tradeRow(userId, m.id, { actionId: t.actionId! });
    expect(await store.trades.recordAction(replay, [], [item(m.id, 'p2', { seq: 9, volume: dec('9') })])).toBe(false);
    // Two items: the transaction's path.
    const t2 = tradeRow(userId, m.id, { actionId: `${m.id}:p3:open:1` });
    expect(
      await store.trades.recordAction(t2, [], [item(m.id, 'p3', { seq: 1 }), item(m.id, 'p0', { open: true, seq: 4 })]),
    ).toBe(true);
    expect((await store.trades.masterItem(m.id, 'position', 'p2'))?.seq).toBe(1);
    await sameAsTable(m.id);

    // The order route's fan-out inserts only what the watcher has not seen.
    const api = await store.trades.insertTrade(tradeRow(userId, m.id, { source: 'api', status: 'pending' }));
    expect(
      await store.trades.recordIntents(
        api.id,
        { status: 'accepted' },
        [],
        [],
        [item(m.id, 'p3', { volume: dec('7') }), item(m.id, 'p4', { originTradeId: api.id })],
      ),
    ).toBe(true);
    expect((await store.trades.masterItem(m.id, 'position', 'p3'))?.volume.toString()).toBe('0.1');
    expect((await store.trades.masterItem(m.id, 'position', 'p4'))?.originTradeId).toBe(api.id);
    await sameAsTable(m.id);
    expect(await statements(() => store.trades.masterItems(m.id, { openOnly: true }))).toBe(0);
    // A closed item is held by its key only: read from the table when asked for; an unknown one is not read.
    await store.trades.upsertMasterItem(item(m.id, 'p4', { open: false }));
    expect(await statements(() => store.trades.masterItem(m.id, 'position', 'p4'))).toBe(1);
    expect(await statements(() => store.trades.masterItem(m.id, 'position', 'never-seen'))).toBe(0);
    await sameAsTable(m.id);
  });

  it('keep nothing of a transaction that rolled back, and read the account again', async () => {
    const { userId, master: m } = await seedAccounts(store, `mic${++keys}-`, 0);
    await store.trades.upsertMasterItem(item(m.id, 'kept'));
    await store.trades.masterItems(m.id);
    const t = tradeRow(userId, m.id, { actionId: `${m.id}:rb:open:1` });
    // The first item is written inside the transaction, the second breaks a NOT NULL: the whole of it rolls back.
    const broken = item(m.id, 'broken', { symbol: null as unknown as string });
    await expect(store.trades.recordAction(t, [], [item(m.id, 'rolled-back'), broken])).rejects.toThrow();
    seen.length = 0;
    expect(await store.trades.masterItem(m.id, 'position', 'rolled-back')).toBeNull();
    expect(seen).toHaveLength(1);
    expect(await store.trades.tradeById(t.id)).toBeNull();
    await sameAsTable(m.id);
    expect((await store.trades.masterItem(m.id, 'position', 'kept'))?.open).toBe(true);
  });

  it('are not filled by a read that a write overtook, and are dropped with a removed account', async () => {
    const { master: m } = await seedAccounts(store, `mic${++keys}-`, 0);
    const { master: m2 } = await seedAccounts(store, `mic${++keys}-`, 0);
    // The write posted first ends before the read does: the read may hold the row before the write, so not kept.
    const write = store.trades.upsertMasterItem(item(m.id, 'raced'));
    const read = store.trades.masterItems(m.id, { openOnly: true });
    await Promise.all([write, read]);
    expect(await statements(() => store.trades.masterItem(m.id, 'position', 'raced'))).toBe(1);
    await sameAsTable(m.id);
    // The read posted first: kept, and the write then applied to it.
    const read2 = store.trades.masterItems(m2.id, { openOnly: true });
    const write2 = store.trades.upsertMasterItem(item(m2.id, 'raced', { volume: dec('0.3') }));
    await Promise.all([read2, write2]);
    expect(await statements(() => store.trades.masterItem(m2.id, 'position', 'raced'))).toBe(0);
    expect((await store.trades.masterItem(m2.id, 'position', 'raced'))?.volume.toString()).toBe('0.3');
    await sameAsTable(m2.id);

    await store.accounts.remove(m.id);
    expect(await store.trades.masterItems(m.id)).toEqual([]);
    await sameAsTable(m.id);
  });
});
