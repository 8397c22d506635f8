import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { dec } from '../../domain/decimal.js';
import type { Account } from '../../domain/account.js';
import { initialHealth } from '../../domain/account.js';
import { AccountSchema } from '../schemas.js';
import { toAccountJson } from '../schemas.js';
import { AccountListCache } from './account-list-cache.js';

// What the route sent before the cache: its response schema's own serializer over toAccountJson.
const schema = Type.Object({ accounts: Type.Array(AccountSchema) });
const fastify = (SerializerSelector() as any)()({ schema, method: 'GET', url: '/v1/accounts', httpStatus: '200' }) as (
  d: unknown,
) => string;

const account = (i: number, o: Partial<Account> = {}): Account => ({
  id: `acc_${String(i).padStart(4, '0')}`,
  userId: 'usr_1',
  platform: 'sim',
  role: i === 0 ? 'master' : 'slave',
  status: 'connected',
  statusReason: i % 2 ? null : 'a "quoted" reason',
  name: `Account ${i} ✓`,
  groupId: i % 3 ? 'grp_1' : null,
  brokerAccountId: `b${i}`,
  brokerAccountNumber: String(1000 + i),
  brokerName: null,
  environment: 'demo',
  currency: 'USD',
  brokerIdentity: `sim:b${i}`,
  // Stored health may carry more than the schema shows: the response never did.
  health: { ...initialHealth(), lastError: i % 2 ? 'timeout' : null, legacy: 1 } as Account['health'],
  balance: i % 4 ? dec('10000.55') : null,
  equity: dec('9999.1'),
  removedAt: null,
  createdAt: new Date(1_700_000_000_000 + i),
  updatedAt: new Date(1_700_000_000_000 + i),
  ...o,
});

describe('AccountListCache', () => {
  it('sends the bytes the response schema would, whole and by page, whatever the stored order', () => {
    const list = [5, 1, 4, 0, 3, 2].map((i) => account(i));
    const sorted = [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
    const cache = new AccountListCache();
    const whole = cache.page('usr_1', list, undefined, Number.MAX_SAFE_INTEGER);
    expect(whole.body(whole.ids).toString()).toBe(fastify({ accounts: sorted.map(toAccountJson) }));
    const p = cache.page('usr_1', list, sorted[1]!.id, 2);
    expect(p.ids).toEqual(sorted.slice(2, 5).map((a) => a.id));
    expect(p.body(p.ids.slice(0, 2)).toString()).toBe(fastify({ accounts: sorted.slice(2, 4).map(toAccountJson) }));
  });

  it('re-serializes only an account the store replaced', () => {
    const list = [0, 1, 2].map((i) => account(i));
    const cache = new AccountListCache();
    const before = cache.page('usr_1', list, undefined, 10);
    expect(before.body(before.ids).toString()).toContain('"status":"connected"');
    const next = [list[0]!, { ...list[1]!, status: 'disconnected' as const }, list[2]!];
    const after = cache.page('usr_1', next, undefined, 10);
    expect(after.body(after.ids).toString()).toBe(fastify({ accounts: next.map(toAccountJson) }));
    // A list of other accounts (one added) is rebuilt, not patched.
    const grown = [...next, account(3)];
    const g = cache.page('usr_1', grown, undefined, 10);
    expect(g.body(g.ids).toString()).toBe(fastify({ accounts: grown.map(toAccountJson) }));
    // As many accounts as before but one swapped for another (one removed, one created): rebuilt too.
    const swapped = [grown[0]!, account(7), grown[2]!, grown[3]!];
    const w = cache.page('usr_1', swapped, undefined, 10);
    const inOrder = [...swapped].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(w.body(w.ids).toString()).toBe(fastify({ accounts: inOrder.map(toAccountJson) }));
  });

  it('serializes only the accounts a page shows, and again only those a change touched', () => {
    let reads = 0;
    // Counts serializations: each reads the name once.
    const counted = (a: Account): Account =>
      Object.defineProperty({ ...a }, 'name', {
        enumerable: true,
        get: () => {
          reads++;
          return a.name;
        },
      });
    const list = Array.from({ length: 1000 }, (_, i) => counted(account(i)));
    const cache = new AccountListCache();
    const first = cache.page('usr_1', list, undefined, 2);
    expect(first.body(first.ids.slice(0, 2)).toString()).toBe(
      fastify({ accounts: list.slice(0, 2).map(toAccountJson) }),
    );
    reads = 0;
    const again = cache.page('usr_1', list, undefined, 2);
    again.body(again.ids.slice(0, 2));
    expect(reads).toBe(0);
    // A health round replaced 500 accounts: nothing is serialized until a page shows one of them.
    const next = list.map((a, i) => (i % 2 ? counted({ ...account(i), status: 'disconnected' as const }) : a));
    const p = cache.page('usr_1', next, list[9]!.id, 2);
    expect(reads).toBe(0);
    expect(p.body(p.ids.slice(0, 2)).toString()).toBe(fastify({ accounts: next.slice(10, 12).map(toAccountJson) }));
    expect(reads).toBe(2 + 2);
  });
});
