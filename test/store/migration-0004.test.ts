import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { runMigrations, type Database } from '../../src/store/db.js';
import { backfillIdentities } from '../../src/store/identity-backfill.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres } from '../helpers/postgres.js';
import { migrateBefore, unmigrated } from '../helpers/migrations.js';

/**
 * Migration 0004 on a database that already holds the duplicates (same broker account connected
 * twice, by one user and across users): it must not fail; the oldest connection keeps the identity, later
 * ones are disabled with a reason. Platform A rows get theirs on start, from the sealed server.
 */
const pgAvailable = await requirePostgres();

function migrationCase(name: string, open: () => Promise<{ database: Database; cleanup(): Promise<void> }>) {
  describe(`migration 0004 on a store with duplicates: ${name}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;
    let store: Store;
    const box = new CredentialBox(randomBytes(32));
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

    beforeAll(async () => {
      ({ database, cleanup } = await open());
      await migrateBefore(database, '0004');
      const db = database.db;
      await db.execute(
        sql`insert into users (id, email, password_hash) values ('usr_1', 'one@example.test', 'h'), ('usr_2', 'two@example.test', 'h'), ('usr_3', 'three@example.test', 'h')`,
      );
      await db.execute(sql`insert into copier_groups (id, user_id, name) values ('grp_1', 'usr_1', 'g')`);
      const row = (
        id: string,
        user: string,
        platform: string,
        role: string,
        brokerId: string,
        number: string,
        env: string | null,
        broker: string | null,
        s: number,
        cred: Record<string, unknown> | null = null,
      ) =>
        db.execute(sql`insert into accounts (id, user_id, platform, role, status, name, group_id, broker_account_id, broker_account_number, broker_name, environment, credentials_enc, health, created_at)
          values (${id}, ${user}, ${platform}, ${role}, 'connected', ${id}, 'grp_1', ${brokerId}, ${number}, ${broker}, ${env}, ${cred ? box.seal(cred) : null}, '{}'::jsonb, ${at(s)})`);
      // The issue: one MT5 login connected twice by one user (two MetaApi ids), Master and Slave of one group.
      await row('acc_a1', 'usr_1', 'platforma', 'master', 'metaapi-1', '5001', null, 'Broker', 1, {
        server: 'Sim-Live',
        login: '5001',
      });
      await row('acc_a2', 'usr_1', 'platforma', 'slave', 'metaapi-2', '5001', null, 'Broker', 2, {
        server: 'SIM-LIVE',
        login: '5001',
      });
      await row('acc_a3', 'usr_1', 'platforma', 'slave', 'metaapi-3', '5001', null, 'Broker', 3, {
        server: 'Other-Live',
        login: '5001',
      });
      // The same TradeLocker account by two users, the cTrader one twice across users, one sim alone.
      await row('acc_b1', 'usr_2', 'platformb', 'slave', '77', '77', 'live', 'SIMB', 4);
      await row('acc_b2', 'usr_1', 'platformb', 'slave', '77', '77', 'live', ' simb ', 5);
      await row('acc_b3', 'usr_1', 'platformb', 'slave', '77', '77', 'demo', 'SIMB', 6);
      await row('acc_c1', 'usr_1', 'platformc', 'slave', '900', '1', 'demo', 'X', 7);
      await row('acc_c2', 'usr_2', 'platformc', 'slave', '900', '1', 'demo', 'X', 8);
      await row('acc_s1', 'usr_1', 'sim', 'slave', 'sim-1', '1', 'demo', null, 9);

      await runMigrations(database);
      store = new Store(database);
    }, 60_000);
    afterAll(async () => {
      await database?.close();
      await cleanup?.();
    });

    const get = async (id: string) => (await store.accounts.byId(id))!;

    it('keeps the oldest connection of each broker account and disables the later ones with a reason', async () => {
      expect(await get('acc_b1')).toMatchObject({ status: 'connected', brokerIdentity: 'platformb:live:simb:77' });
      expect(await get('acc_b2')).toMatchObject({
        status: 'disabled',
        brokerIdentity: null,
        statusReason: expect.stringContaining('by another user'),
      });
      // Another environment is another account.
      expect(await get('acc_b3')).toMatchObject({ status: 'connected', brokerIdentity: 'platformb:demo:simb:77' });
      expect(await get('acc_c1')).toMatchObject({ status: 'connected', brokerIdentity: 'platformc:demo:900' });
      expect(await get('acc_c2')).toMatchObject({ status: 'disabled', brokerIdentity: null });
      expect((await get('acc_c2')).statusReason).not.toContain('acc_c1');
      expect(await get('acc_s1')).toMatchObject({ status: 'connected', brokerIdentity: 'sim:sim-1' });
      // The identities the migration wrote are the ones the connect flows compute: a new connect collides.
      await expect(
        store.accounts.create({
          userId: 'usr_3',
          platform: 'platformb',
          role: 'slave',
          name: 'again',
          brokerAccountId: '77',
          brokerAccountNumber: '77',
          brokerName: 'SimB',
          environment: 'live',
        }),
      ).rejects.toMatchObject({ code: 'account_already_connected' });
    });

    it('platform A rows get their identity on start from the sealed server; the later duplicate is disabled, naming the one kept', async () => {
      expect((await get('acc_a1')).brokerIdentity).toBeNull();
      const r = await backfillIdentities(store, (s) => box.open(s));
      expect(r).toEqual({ claimed: ['acc_a1', 'acc_a3'], disabled: ['acc_a2'], unreadable: [] });
      expect(await get('acc_a1')).toMatchObject({ status: 'connected', brokerIdentity: 'platforma:sim-live:5001' });
      expect(await get('acc_a2')).toMatchObject({
        status: 'disabled',
        brokerIdentity: null,
        statusReason: expect.stringContaining('acc_a1'),
      });
      expect(await get('acc_a3')).toMatchObject({ status: 'connected', brokerIdentity: 'platforma:other-live:5001' });
      // A second start finds nothing left to do.
      expect(await backfillIdentities(store, (s) => box.open(s))).toEqual({
        claimed: [],
        disabled: [],
        unreadable: [],
      });
    });
  });
}

migrationCase('PGlite', unmigrated.pglite);

describe.runIf(pgAvailable)('PostgreSQL server', () => {
  migrationCase('PostgreSQL', unmigrated.postgres);
});
