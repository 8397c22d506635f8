import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { Store } from '../../src/store/store.js';
import { dec } from '../../src/domain/decimal.js';
import type { Platform } from '../../src/domain/types.js';
import type { Db } from '../../src/store/db.js';
import { accounts } from '../../src/store/schema.js';
import { live, toAccount } from '../../src/store/repos/account-row.js';
import { LIST_CHUNK, readAccountList } from '../../src/store/repos/account-list-read.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const pgAvailable = await requirePostgres();
/** More than two chunks, the last one partial. */
const N = 2 * LIST_CHUNK + 345;
const PLATFORMS: Platform[] = ['sim', 'platformb', 'platformc'];

/**
 * A user with N accounts whose columns take every shape a list carries: nulls and values, decimals with fractions,
 * statuses with reasons, groups, a removed account; created in one statement, so their created_at ties and the id
 * decides their order.
 */
async function seed(store: Store): Promise<{ userId: string; groupId: string; removed: string }> {
  const user = await store.users.create(`list${Date.now()}@example.test`, 'x');
  const group = await store.accounts.createGroup(user.id, 'g');
  await store.accounts.createMany(
    Array.from({ length: N }, (_, i) => ({
      userId: user.id,
      platform: PLATFORMS[i % 3]!,
      role: i % 50 === 0 ? ('master' as const) : ('slave' as const),
      groupId: i % 2 === 0 ? group.id : null,
      name: `Account "${i}" \u00e9\u4e2d`,
      brokerAccountId: `lst${i}`,
      brokerAccountNumber: String(5000 + i),
      brokerName: i % 4 === 0 ? null : `Broker ${i % 7}`,
      environment: i % 3 === 0 ? 'demo' : null,
      currency: i % 5 === 0 ? null : 'USD',
      balance: i % 6 === 0 ? null : dec(`${10000 + i}.${String(i).padStart(8, '0')}`),
      equity: i % 6 === 0 ? null : dec(`-${i}.5`),
    })),
  );
  const [first, second, third] = await store.accounts.list(user.id);
  await store.accounts.setStatus(first!.id, 'reconnect_required', 'token expired: "x"');
  await store.accounts.setFunds(second!.id, dec('12.000000010'), dec('0'));
  await store.accounts.remove(third!.id);
  return { userId: user.id, groupId: group.id, removed: third!.id };
}

/** What the query builder reads and maps for the same rows: the answer the JSON read must equal. */
const builderRead = async (db: Db, userId: string) =>
  (
    await db
      .select()
      .from(accounts)
      .where(and(eq(accounts.userId, userId), live))
      .orderBy(asc(accounts.createdAt), asc(accounts.id))
  ).map(toAccount);

/** `db` whose answers schedule a macrotask as they arrive: it has run by the time a read that yields returns. */
function watched(db: Db): { db: Db; yielded: () => boolean } {
  let ran = false;
  const proxy = new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'execute') return Reflect.get(target, key, receiver);
      return (q: unknown) =>
        (target.execute as (q: unknown) => Promise<unknown>)(q).then((r) => {
          ran = false;
          setImmediate(() => {
            ran = true;
          });
          return r;
        });
    },
  });
  return { db: proxy, yielded: () => ran };
}

const cases: Array<[string, boolean, () => Promise<{ store: Store; close: () => Promise<void> }>]> = [
  [
    'the embedded store (cached list)',
    true,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ct-list-'));
      const store = await Store.open({ dataDir: dir });
      return {
        store,
        close: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    'PostgreSQL (read each time)',
    pgAvailable,
    async () => {
      const tmp = await tempDatabase();
      const store = await Store.open({ dataDir: ':unused:', databaseUrl: tmp.url });
      return {
        store,
        close: async () => {
          await store.close();
          await tmp.drop();
        },
      };
    },
  ],
];

describe.each(cases)('a user account list read as JSON chunks, on %s', (_name, enabled, open) => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of closers) await c();
  });

  it.runIf(enabled)('equals the query builder row for row, in the same order, and yields between chunks', async () => {
    const { store, close } = await open();
    closers.push(close);
    const { userId, groupId, removed } = await seed(store);
    const db = store.database.db;
    const expected = await builderRead(db, userId);
    expect(expected).toHaveLength(N - 1);
    expect(expected.some((a) => a.id === removed)).toBe(false);

    const w = watched(db);
    const got = await readAccountList(w.db, and(eq(accounts.userId, userId), live)!);
    expect(w.yielded()).toBe(true);
    expect(got).toEqual(expected);
    // Field by field where toEqual could hide a difference of representation.
    for (const [i, a] of got.entries()) {
      const e = expected[i]!;
      expect(a.createdAt.getTime()).toBe(e.createdAt.getTime());
      expect(a.updatedAt.getTime()).toBe(e.updatedAt.getTime());
      expect(a.balance?.toString() ?? null).toBe(e.balance?.toString() ?? null);
      expect(a.equity?.toString() ?? null).toBe(e.equity?.toString() ?? null);
    }
    expect(got.find((a) => a.status === 'reconnect_required')?.statusReason).toBe('token expired: "x"');

    // Through the repository: the whole list, and the filters (in memory on the embedded store, in SQL on PostgreSQL).
    expect(await store.accounts.list(userId)).toEqual(expected);
    expect(await store.accounts.list(userId, { platform: 'platformb', groupId })).toEqual(
      expected.filter((a) => a.platform === 'platformb' && a.groupId === groupId),
    );
  });

  it.runIf(enabled)('answers an empty list for a user without accounts', async () => {
    const { store, close } = await open();
    closers.push(close);
    const user = await store.users.create(`empty${Date.now()}@example.test`, 'x');
    expect(await readAccountList(store.database.db, eq(accounts.userId, user.id))).toEqual([]);
    expect(await store.accounts.list(user.id)).toEqual([]);
  });

  it.runIf(enabled)(
    'reads a page from the table in id order: every page of a walk, no removed or foreign account',
    async () => {
      const { store, close } = await open();
      closers.push(close);
      const { userId, removed } = await seed(store);
      const other = await store.users.create(`other${Date.now()}@example.test`, 'x');
      await store.accounts.createMany(
        Array.from({ length: 30 }, (_, i) => ({
          userId: other.id,
          platform: 'sim' as const,
          role: 'slave' as const,
          name: `Other ${i}`,
          brokerAccountId: `oth${i}`,
          brokerAccountNumber: String(9000 + i),
        })),
      );
      // Two accounts made later, one by one: their created_at differs from the batch's and from each other's.
      for (const i of [1, 2])
        await store.accounts.create({
          userId,
          platform: 'sim',
          role: 'slave',
          name: `Later ${i}`,
          brokerAccountId: `later${i}`,
          brokerAccountNumber: String(8000 + i),
        });
      const expected = await builderRead(store.database.db, userId);
      const byId = [...expected].sort((a, b) => (a.id < b.id ? -1 : 1));
      for (const limit of [LIST_CHUNK, 777, 1]) {
        const walked: string[] = [];
        for (let after: string | undefined; ; ) {
          const page = await store.accounts.listPage(userId, after, limit);
          expect(page.length).toBeLessThanOrEqual(limit);
          walked.push(...page.map((a) => a.id));
          if (page.length < limit) break;
          after = page[page.length - 1]!.id;
          if (limit === 1 && walked.length === 5) break;
        }
        expect(walked).toEqual(byId.slice(0, walked.length).map((a) => a.id));
        if (limit !== 1) expect(walked).toHaveLength(expected.length);
      }
      expect((await store.accounts.listPage(userId, undefined, N + 10)).map((a) => a.id)).not.toContain(removed);
      // Field for field as the builder reads them.
      expect(await store.accounts.listPage(userId, byId[99]!.id, 50)).toEqual(byId.slice(100, 150));
      expect(await store.accounts.listPage(userId, byId[byId.length - 1]!.id, 50)).toEqual([]);
      expect(await store.accounts.listPage(`usr_${'0'.repeat(25)}`, undefined, 50)).toEqual([]);
      // The list the pages started reading (the embedded store keeps it): in the list's order, created_at then id.
      expect(await store.accounts.list(userId)).toEqual(expected);
      if (store.accounts.held(userId)) expect(store.accounts.held(userId)).toEqual(expected);
    },
  );
});

// Only the embedded store keeps lists (AccountsRepo.cache); these are the reads of one while writes land.
describe('the embedded store reading a list in chunks while accounts are written', () => {
  let store: Store;
  let dir: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ct-list-w-'));
    store = await Store.open({ dataDir: dir });
  });
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a connection made during the read: the read answers one snapshot with it, and keeps nothing', async () => {
    const { userId } = await seed(store);
    expect(store.accounts.held(userId)).toBeNull();
    // The page starts reading the whole list (a statement per LIST_CHUNK accounts, queued behind the page); `list`
    // joins that read; the new connection is written while it is under way and clears what it began.
    const page = store.accounts.listPage(userId, undefined, 10);
    const joined = store.accounts.list(userId);
    const made = await store.accounts.create({
      userId,
      platform: 'sim',
      role: 'slave',
      name: 'Written during the read',
      brokerAccountId: 'during1',
      brokerAccountNumber: '7001',
    });
    expect(await page).toHaveLength(10);
    const expected = await builderRead(store.database.db, userId);
    expect(expected.map((a) => a.id)).toContain(made.id);
    expect(await joined).toEqual(expected);
  });

  it('a status and funds written during the read are in the list it keeps (the rows were read before them)', async () => {
    const { userId } = await seed(store);
    expect(store.accounts.held(userId)).toBeNull();
    // The account in the first chunk (lowest id): its row is fetched before the writes below commit.
    const [first] = await store.accounts.listPage(userId, undefined, 1);
    expect(store.accounts.held(userId)).toBeNull();
    const joined = store.accounts.list(userId);
    await store.accounts.setStatus(first!.id, 'paused', 'written during the read');
    await store.accounts.setFunds(first!.id, dec('4321.5'), dec('4000'));
    const got = (await joined).find((a) => a.id === first!.id)!;
    expect([got.status, got.statusReason, got.balance?.toString()]).toEqual([
      'paused',
      'written during the read',
      '4321.5',
    ]);
    const kept = store.accounts.held(userId)!.find((a) => a.id === first!.id)!;
    expect([kept.status, kept.equity?.toString()]).toEqual(['paused', '4000']);
    expect(store.accounts.held(userId)).toEqual(await builderRead(store.database.db, userId));
  });
});
