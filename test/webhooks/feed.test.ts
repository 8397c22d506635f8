import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventFeed } from '../../src/events/feed.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const available = await requirePostgres();

async function userWithStore(store: Store): Promise<string> {
  return (await store.users.create(`feed-${Math.random().toString(36).slice(2)}@example.test`, 'h')).id;
}

describe('event feed on PGlite', () => {
  let store: Store;
  beforeAll(async () => {
    store = await Store.open({ dataDir: ':memory:' });
  });
  afterAll(async () => store?.close());

  it('passes a cursor taken by a rolled-back transaction once the grace has passed, and not before', async () => {
    const feed = new EventFeed(store.events, { gapGraceMs: 300 });
    feed.start();
    try {
      const u = await userWithStore(store);
      await store.events.emit([{ userId: u, accountId: 'a', type: 'order.accepted', payload: {} }]);
      expect(await feed.read(u, 0, 10)).toHaveLength(1);
      await store.database.db
        .transaction(async (tx) => {
          await store.events.append(tx, [{ userId: u, accountId: 'a', type: 'order.rejected', payload: {} }]);
          tx.rollback();
        })
        .catch(() => undefined);
      await store.events.emit([{ userId: u, accountId: 'a', type: 'order.accepted', payload: { n: 2 } }]);
      // The hole might still be a transaction about to commit: hold back.
      expect(await feed.read(u, 0, 10)).toHaveLength(1);
      const woke = new Promise<void>((r) => feed.onVisible((x) => x === u && r()));
      await woke;
      const rows = await feed.read(u, 0, 10);
      expect(rows.map((r) => r.type)).toEqual(['order.accepted', 'order.accepted']);
    } finally {
      feed.stop();
    }
  });
});

describe.runIf(available)('event feed on PostgreSQL', () => {
  let store: Store;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it('never lets a reader pass an event that commits after a later cursor did', async () => {
    const feed = new EventFeed(store.events, { gapGraceMs: 30_000 });
    feed.start();
    try {
      const u = await userWithStore(store);
      let release: () => void = () => undefined;
      const hold = new Promise<void>((r) => (release = r));
      let appended: () => void = () => undefined;
      const inFlight = new Promise<void>((r) => (appended = r));
      // Transaction A takes the earlier cursor and stays open; B takes the later one and commits first.
      const a = store.database.db.transaction(async (tx) => {
        await store.events.append(tx, [
          { userId: u, accountId: 'acc_a', type: 'copy.confirmed', payload: { who: 'A' } },
        ]);
        appended();
        await hold;
      });
      await inFlight;
      await store.events.emit([{ userId: u, accountId: 'acc_b', type: 'copy.confirmed', payload: { who: 'B' } }]);
      expect(await store.events.after(u, 0, 10)).toHaveLength(1); // B is visible to a naive reader...
      expect(await feed.read(u, 0, 10)).toHaveLength(0); // ...but not past A's open cursor.
      release();
      await a;
      store.events.notify([u]);
      const rows = await feed.read(u, 0, 10);
      expect(rows.map((r) => (r.payload as { who: string }).who)).toEqual(['A', 'B']);
    } finally {
      feed.stop();
    }
  });
});
