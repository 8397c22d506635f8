import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { settleInFlightKeys } from '../../src/api/idempotency-settle.js';
import { Store } from '../../src/store/store.js';
import { storeCases } from '../engine/copy-harness.js';
import { startTestService, type TestService } from '../helpers/service.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const order = { symbol: 'EURUSD', side: 'buy', volume: 0.1 };

/** What a process that died mid-request leaves: the key claimed, no answer stored. */
async function leaveInFlight(
  store: Store,
  userId: string,
  key: string,
  requestId: string,
  claimedBy: string,
  createdAt = new Date(),
): Promise<void> {
  await store.database.db.execute(sql`
    insert into idempotency_keys (user_id, key, route, body_digest, status, response, request_id, claimed_by, created_at)
    values (${userId}, ${key}, '/v1/accounts/:account_id/orders', 'x', null, null, ${requestId}, ${claimedBy}, ${createdAt})
    on conflict (user_id, key) do update set status = null, response = null, request_id = ${requestId}, claimed_by = ${claimedBy}, created_at = ${createdAt}`);
}

describe('Idempotency-Key after a crash (durable embedded store, restarted)', () => {
  it('a key left in flight gets the answer of the trade it made, or is freed when nothing was made; not 409 for 24 h', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ct-idem-restart-'));
    dirs.push(dataDir);
    let svc: TestService = await startTestService({ dataDir });
    let closed = false;
    try {
      const key = svc.demo!.apiKey;
      const master = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.find(
        (a: any) => a.role === 'master' && a.platform === 'sim',
      );
      const userId = (await svc.store.users.byEmail(svc.demo!.email))!.id;
      const first = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: order,
        headers: { 'idempotency-key': 'made-a-trade' },
      });
      expect(first.status).toBe(202);
      const trade = await svc.store.trades.ownedTrade(userId, first.body.tradeId);
      // The process "died" after the trade was made but before the answer was stored; a second key died before anything.
      const digest = (
        (await svc.store.database.db.execute(
          sql`select body_digest from idempotency_keys where key = 'made-a-trade'`,
        )) as unknown as { rows: Array<{ body_digest: string }> }
      ).rows[0]!.body_digest;
      await leaveInFlight(svc.store, userId, 'made-a-trade', trade!.requestId!, 'a-dead-process');
      await svc.store.database.db.execute(
        sql`update idempotency_keys set body_digest = ${digest} where key = 'made-a-trade'`,
      );
      await leaveInFlight(svc.store, userId, 'made-nothing', 'req_never_reached_the_broker', 'a-dead-process');
      const stuck = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: order,
        headers: { 'idempotency-key': 'made-a-trade' },
      });
      expect(stuck.status).toBe(409);
      await svc.close();
      closed = true;

      svc = await startTestService({ dataDir });
      closed = false;
      const positionsBefore = svc.broker.positions((await svc.store.accounts.byId(master.id))!.brokerAccountId).length;
      const replay = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: order,
        headers: { 'idempotency-key': 'made-a-trade' },
      });
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toMatchObject({
        tradeId: first.body.tradeId,
        status: 'accepted',
        copiedTo: first.body.copiedTo,
      });
      expect(svc.broker.positions((await svc.store.accounts.byId(master.id))!.brokerAccountId)).toHaveLength(
        positionsBefore,
      );

      const retried = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: order,
        headers: { 'idempotency-key': 'made-nothing' },
      });
      expect(retried.status).toBe(202);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(retried.body.tradeId).not.toBe(first.body.tradeId);
    } finally {
      if (!closed) await svc.close();
    }
  }, 120_000);
});

describe('settling keys left in flight, on each store', async () => {
  for (const [name, db] of await storeCases()) {
    it(`${name}: only keys of other processes claimed before the cut-off; unresolved and refused trades get the route's answer`, async () => {
      const d = await db();
      const store = await Store.open({ dataDir: d.dataDir ?? ':memory:', databaseUrl: d.databaseUrl });
      try {
        const u = await store.users.create(`u-${Date.now()}@example.test`, 'x');
        const acc = await store.accounts.create({
          userId: u.id,
          platform: 'sim',
          role: 'master',
          name: 'M',
          brokerAccountId: 'b1',
          brokerAccountNumber: '1',
        });
        const mk = async (id: string, status: string, requestId: string, masterOutcome: unknown = null) =>
          store.database.db.execute(sql`
          insert into trades (id, user_id, master_account_id, source, action, symbol, side, order_type, volume, tag, status, request_id, master_outcome)
          values (${id}, ${u.id}, ${acc.id}, 'api', 'open', 'EURUSD', 'buy', 'market', '0.1', ${`tag_${id}`}, ${status}, ${requestId}, ${masterOutcome === null ? null : JSON.stringify(masterOutcome)}::jsonb)`);
        await mk('trd_unres', 'unresolved', 'req_u');
        await mk('trd_rej', 'rejected', 'req_r', { kind: 'rejected', code: 'no_money', message: 'not enough margin' });
        await mk('trd_ok', 'accepted', 'req_a');
        const old = new Date(Date.now() - 10 * 60_000);
        await leaveInFlight(store, u.id, 'unresolved', 'req_u', 'dead', old);
        await leaveInFlight(store, u.id, 'refused', 'req_r', 'dead', old);
        await leaveInFlight(store, u.id, 'accepted', 'req_a', 'dead', old);
        await leaveInFlight(store, u.id, 'nothing-made', 'req_n', 'dead', old);
        await leaveInFlight(store, u.id, 'sibling-running', 'req_s', 'alive-sibling', new Date());
        await leaveInFlight(store, u.id, 'mine', 'req_m', 'me', old);
        const r = await settleInFlightKeys(store, { instanceId: 'me', before: new Date(Date.now() - 120_000) });
        expect(r).toEqual({ answered: 3, freed: 1 });
        const rows = (
          (await store.database.db.execute(
            sql`select key, status, response from idempotency_keys where user_id = ${u.id} order by key`,
          )) as unknown as { rows: Array<{ key: string; status: number | null; response: any }> }
        ).rows;
        const byKey = Object.fromEntries(rows.map((x) => [x.key, x]));
        expect(byKey['sibling-running']!.status).toBeNull();
        expect(byKey['mine']!.status).toBeNull();
        expect(byKey['nothing-made']).toBeUndefined();
        expect(byKey['accepted']).toMatchObject({
          status: 202,
          response: { body: { tradeId: 'trd_ok', status: 'accepted', copiedTo: 0, fillPrice: null } },
        });
        expect(byKey['unresolved']).toMatchObject({
          status: 409,
          response: { body: { code: 'write_outcome_unknown', tradeId: 'trd_unres', requestId: 'req_u' } },
        });
        expect(byKey['refused']).toMatchObject({
          status: 400,
          response: {
            body: {
              code: 'invalid_request',
              tradeId: 'trd_rej',
              brokerCode: 'no_money',
              error: expect.stringContaining('not enough margin'),
            },
          },
        });
      } finally {
        await store.close();
        await d.drop();
      }
    }, 60_000);
  }
});
