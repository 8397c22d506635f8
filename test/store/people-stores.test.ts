import { afterAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { seedAccounts } from '../helpers/store-seed.js';

const pgAvailable = await requirePostgres();

/**
 * Migration 0027 (people) on both stores: roles granted on accounts and groups, the second factor's columns and
 * recovery codes (each used once), and one-time tokens (single use, expiring).
 */
function peopleContract(name: string, open: () => Promise<{ store: Store; close(): Promise<void> }>) {
  describe(`people on ${name}`, () => {
    let env: { store: Store; close(): Promise<void> } | null = null;
    afterAll(async () => env?.close());

    it('grants, replaces and revokes roles; used codes and tokens do not work twice', async () => {
      env = await open();
      const { store } = env;
      const { userId: owner, master } = await seedAccounts(store, `pp${name}`, 1);
      const viewer = await store.users.create(`viewer-${name}@example.test`, 'x');
      const base = { ownerUserId: owner, userId: viewer.id, resourceKind: 'account' as const, resourceId: master.id };
      await store.grants.upsert({ ...base, role: 'read_only' });
      const g = await store.grants.upsert({ ...base, role: 'trader' });
      expect([g.role, g.email]).toEqual(['trader', viewer.email]);
      expect(await store.grants.ofResource('account', master.id)).toHaveLength(1);
      const group = await store.accounts.createGroup(owner, 'shared');
      expect(await store.grants.groupOwner(group.id)).toBe(owner);
      await store.grants.upsert({ ...base, resourceKind: 'group', resourceId: group.id, role: 'read_only' });
      const both = [
        { kind: 'account' as const, id: master.id },
        { kind: 'group' as const, id: group.id },
      ];
      expect((await store.grants.rolesOf(viewer.id, both)).map((r) => r.role).sort()).toEqual(['read_only', 'trader']);
      expect(await store.grants.sharedWith(viewer.id)).toHaveLength(2);
      expect(await store.grants.revoke('account', master.id, viewer.id)).toBe(true);
      expect(await store.grants.revoke('account', master.id, viewer.id)).toBe(false);

      const sf = store.secondFactor;
      expect(await sf.setPending(viewer.id, 'v2.sealed')).toBe(true);
      await sf.enable(viewer.id, 100, ['h1', 'h2']);
      expect(await sf.setPending(viewer.id, 'v2.other')).toBe(false);
      expect(await sf.useStep(viewer.id, 100)).toBe(false);
      expect(await sf.useStep(viewer.id, 101)).toBe(true);
      expect(await sf.useRecoveryCode(viewer.id, 'h1')).toBe(true);
      expect(await sf.useRecoveryCode(viewer.id, 'h1')).toBe(false);
      expect(await sf.recoveryCodesLeft(viewer.id)).toBe(1);

      const now = new Date();
      await sf.addToken(viewer.id, 'email_verification', 'tok', new Date(now.getTime() + 60_000));
      expect(await sf.tokenUser('sign_in_second_factor', 'tok', now, false)).toBeNull();
      expect(await sf.tokenUser('email_verification', 'tok', new Date(now.getTime() + 61_000), true)).toBeNull();
      expect(await sf.tokenUser('email_verification', 'tok', now, true)).toBe(viewer.id);
      expect(await sf.tokenUser('email_verification', 'tok', now, true)).toBeNull();
      await sf.disable(viewer.id);
      expect(await sf.get(viewer.id)).toEqual({ secretEnc: null, enabledAt: null, lastStep: null });
    }, 120_000);
  });
}

peopleContract('PGlite', async () => {
  const store = await Store.open({ dataDir: ':memory:' });
  return { store, close: () => store.close() };
});

if (pgAvailable)
  peopleContract('PostgreSQL', async () => {
    const db = await tempDatabase();
    const store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
    return {
      store,
      async close() {
        await store.close();
        await db.drop();
      },
    };
  });
