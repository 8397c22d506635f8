import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import type { AdapterRegistry } from '../../src/engine/adapter-registry.js';

/**
 * Issue 14's missing actions on family V (and so on the dashboard's /app/v1 mirror): rename, pause, resume and
 * delete a copier group; remove an account, refused with 409 open_copies while copies are open unless forced.
 */
const stores = [{ name: 'pglite', pg: false }, ...((await requirePostgres()) ? [{ name: 'postgres', pg: true }] : [])];

describe.each(stores)('account and group actions ($name)', { timeout: 60_000 }, ({ pg }) => {
  let svc: TestService;
  let drop: (() => Promise<void>) | undefined;
  let key: string;
  let accounts: any[];
  let groups: any[];

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (pg) {
      const db = await tempDatabase();
      drop = db.drop;
      env = { DATABASE_URL: db.url };
    }
    svc = await startTestService({ env });
    key = svc.demo!.apiKey;
    accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    groups = (await svc.call('GET', '/v1/copier-groups', { token: key })).body.groups;
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await drop?.();
  });

  const demoGroup = () => groups.find((g) => g.name === 'Demo group');

  it('renames a group; a foreign or unknown group is the same 404; an empty name is 400', async () => {
    const g = demoGroup();
    const r = await svc.call('PATCH', `/v1/copier-groups/${g.id}`, { token: key, body: { name: 'Renamed group' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: g.id, name: 'Renamed group' });
    expect((await svc.call('GET', `/v1/copier-groups/${g.id}`, { token: key })).body.name).toBe('Renamed group');
    expect((await svc.call('PATCH', `/v1/copier-groups/${g.id}`, { token: key, body: { name: '' } })).status).toBe(400);
    const other = await svc.deps.auth.createUser(`other-${Date.now()}@example.test`, 'other-password');
    const foreign = await svc.store.accounts.createGroup(other.id, 'theirs');
    const a = await svc.call('PATCH', `/v1/copier-groups/${foreign.id}`, { token: key, body: { name: 'mine now' } });
    const b = await svc.call('PATCH', '/v1/copier-groups/grp_unknown', { token: key, body: { name: 'x' } });
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(a.body.error).toBe(b.body.error);
    expect((await svc.store.accounts.ownedGroup(other.id, foreign.id))!.name).toBe('theirs');
  });

  it('pauses and resumes a whole group', async () => {
    const g = demoGroup();
    const paused = await svc.call('POST', `/v1/copier-groups/${g.id}/pause`, { token: key });
    expect(paused.status).toBe(200);
    expect([paused.body.master, ...paused.body.slaves].every((a: any) => a.status === 'paused')).toBe(true);
    const resumed = await svc.call('POST', `/v1/copier-groups/${g.id}/resume`, { token: key });
    expect(resumed.status).toBe(200);
    expect([resumed.body.master, ...resumed.body.slaves].map((a: any) => a.status)).toEqual(
      Array(1 + g.slaves.length).fill('connected'),
    );
  });

  it('refuses to remove an account with open copies (409 open_copies), removes it with force=true, and a quiet one at once', async () => {
    const g = demoGroup();
    const master = g.master;
    const slave = g.slaves.find((s: any) => s.platform === 'platformb'); // sealed broker credentials to see go
    const order = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(order.status).toBe(202);
    await expect.poll(async () => (await svc.store.accounts.openCopies(slave.id)).asSlave, { timeout: 10_000 }).toBe(1);

    const bySlave = await svc.call('DELETE', `/v1/accounts/${slave.id}`, { token: key });
    expect(bySlave.status).toBe(409);
    expect(bySlave.body).toMatchObject({ code: 'open_copies', openCopies: { asSlave: 1, asMaster: 0 } });
    expect(bySlave.body.error).toMatch(/force=true/);
    const byMaster = await svc.call('DELETE', `/v1/accounts/${master.id}`, { token: key });
    expect(byMaster.status).toBe(409);
    expect(byMaster.body.openCopies.asMaster).toBeGreaterThan(0);
    const delGroup = await svc.call('DELETE', `/v1/copier-groups/${g.id}`, { token: key });
    expect(delGroup.status).toBe(409);
    expect(delGroup.body.code).toBe('open_copies');

    expect(await svc.store.accounts.credentialsEnc(slave.id)).toMatch(/.+/);
    const forced = await svc.call('DELETE', `/v1/accounts/${slave.id}?force=true`, { token: key });
    expect(forced.status).toBe(204);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}`, { token: key })).status).toBe(404);
    // A soft delete: the row stays for the history, marked, its identity released.
    expect(await svc.store.accounts.byId(slave.id)).toMatchObject({ brokerIdentity: null, groupId: null });
    expect((await svc.store.accounts.byId(slave.id))!.removedAt).toBeInstanceOf(Date);
    expect(await svc.store.accounts.credentialsEnc(slave.id)).toBeNull();
    expect((await svc.store.accounts.openCopies(slave.id)).asSlave).toBe(0);

    // An account that never copied anything goes without force.
    const quiet = accounts.find((a) => a.name === 'Demo Slave (A group)');
    expect((await svc.call('DELETE', `/v1/accounts/${quiet.id}`, { token: key })).status).toBe(204);
    expect((await svc.call('DELETE', `/v1/accounts/${quiet.id}`, { token: key })).status).toBe(404);
  });

  it('deletes a group with force=true: its accounts stay, out of any group', async () => {
    const g = demoGroup();
    const r = await svc.call('DELETE', `/v1/copier-groups/${g.id}?force=true`, { token: key });
    expect(r.status).toBe(204);
    expect((await svc.call('GET', `/v1/copier-groups/${g.id}`, { token: key })).status).toBe(404);
    const master = (await svc.call('GET', `/v1/accounts/${g.master.id}`, { token: key })).body;
    expect(master).toMatchObject({ id: g.master.id, groupId: null, role: 'master' });
  });

  it("removing a Master keeps its trades and its Slaves' ledger, named; it is gone from every account view and from the health monitor", async () => {
    const master = accounts.find((a) => a.id === demoGroup().master.id);
    const app = svc.demo!.accessToken;
    const before = (await svc.call('GET', `/v1/trades?accountId=${master.id}`, { token: key })).body.trades;
    expect(before.length).toBeGreaterThan(0);
    const copies = before.flatMap((t: any) => t.copies);
    expect(copies.length).toBeGreaterThan(0);
    const slaveId = copies
      .map((c: any) => c.accountId)
      .find((id: string) => accounts.some((a) => a.id === id && a.platform !== 'platformb'));

    expect((await svc.call('DELETE', `/v1/accounts/${master.id}?force=true`, { token: key })).status).toBe(204);

    // The history stays, with the removed Master's name.
    const after = (await svc.call('GET', `/v1/trades?accountId=${master.id}`, { token: key })).body.trades;
    expect(after.map((t: any) => t.tradeId)).toEqual(before.map((t: any) => t.tradeId));
    expect(after.flatMap((t: any) => t.copies).map((c: any) => c.intentId)).toEqual(copies.map((c: any) => c.intentId));
    expect(after[0].masterAccountName).toBe(master.name);
    const one = await svc.call('GET', `/v1/trades/${before[0].tradeId}`, { token: key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ masterAccountId: master.id, masterAccountName: master.name });
    const ledger = await svc.call('GET', `/v1/accounts/${slaveId}/ledger`, { token: key });
    expect(ledger.status).toBe(200);
    const mine = copies.filter((c: any) => c.accountId === slaveId).map((c: any) => c.intentId);
    expect(ledger.body.entries.map((e: any) => e.intentId)).toEqual(expect.arrayContaining(mine));

    // Gone from every account view: the same 404 as an unknown id, absent from both families' lists.
    for (const path of [
      `/v1/accounts/${master.id}`,
      `/v1/accounts/${master.id}/capabilities`,
      `/v1/accounts/${master.id}/ledger`,
      `/app/v1/accounts/${master.id}`,
    ]) {
      const r = await svc.call('GET', path, { token: path.startsWith('/app') ? app : key });
      expect(r.status, path).toBe(404);
      expect(r.body.code, path).toBe('not_found');
    }
    expect((await svc.call('DELETE', `/v1/accounts/${master.id}`, { token: key })).status).toBe(404);
    const list = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.map((a: any) => a.id);
    expect(list).not.toContain(master.id);
    expect(list.length).toBeGreaterThan(0);
    const appList = (await svc.call('GET', '/app/v1/accounts', { token: app })).body.accounts.map((a: any) => a.id);
    expect(appList).not.toContain(master.id);
    const rList = await svc.call('GET', '/api/trading-accounts', { token: app });
    expect(rList.status).toBe(200);
    expect(JSON.stringify(rList.body)).not.toContain(master.id);
    for (const g of (await svc.call('GET', '/v1/copier-groups', { token: key })).body.groups)
      expect([g.master?.id, ...g.slaves.map((s: any) => s.id)]).not.toContain(master.id);

    // Its sealed credentials are wiped, its identity released; the engine-internal read still finds the row.
    expect(await svc.store.accounts.credentialsEnc(master.id)).toBeNull();
    const row = (await svc.store.accounts.byId(master.id))!;
    expect(row).toMatchObject({ brokerIdentity: null, groupId: null });
    expect(row.removedAt).toBeInstanceOf(Date);
    expect((await svc.store.accounts.all()).map((a) => a.id)).not.toContain(master.id);
    await expect(svc.deps.adapters.forAccount(row)).rejects.toMatchObject({ code: 'not_found' });

    // The health monitor reads the live accounts only.
    const seen: string[] = [];
    const probe = {
      forAccount: async (a: { id: string }) => {
        seen.push(a.id);
        throw new Error('probe');
      },
    } as unknown as AdapterRegistry;
    await new HealthMonitor(svc.store, probe, { intervalMs: 60_000, staleAfterMs: 0, checkTimeoutMs: 1000 }).checkAll();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).not.toContain(master.id);
  });

  it('the same broker login connects again (201, a new connection) after its removal', async () => {
    svc.deps.connectLimit.max = 1000;
    const login = { email: 'again@broker-b.example', password: 'b-password-again', server: 'SIMB-Again' };
    svc.broker.createAccount({
      balance: '1000',
      currency: 'EUR',
      hedging: true,
      meta: { ...login, environment: 'live' },
    });
    const app = svc.demo!.accessToken;
    const connect = async () => {
      const d = await svc.call('POST', '/api/connect/platformb/discover', {
        token: app,
        body: { environment: 'live', ...login },
      });
      expect(d.status).toBe(200);
      const pick = d.body.accounts[0];
      return svc.call('POST', '/api/connect/platformb/confirm', {
        token: app,
        body: {
          connectionId: d.body.connectionId,
          accountId: pick.accountId,
          accountNumber: pick.accountNumber,
          role: 'slave',
        },
      });
    };
    const first = await connect();
    expect(first.status).toBe(201);
    expect((await svc.call('DELETE', `/v1/accounts/${first.body.id}`, { token: key })).status).toBe(204);
    const again = await connect();
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
    expect((await svc.call('GET', `/v1/accounts/${again.body.id}`, { token: key })).status).toBe(200);
    expect((await svc.call('GET', `/v1/accounts/${first.body.id}`, { token: key })).status).toBe(404);
  });

  it('documents the new routes as open points', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/v1/accounts/{account_id}', 'delete'],
      ['/v1/copier-groups/{group_id}', 'delete'],
      ['/v1/copier-groups/{group_id}', 'patch'],
      ['/v1/copier-groups/{group_id}/resume', 'post'],
      ['/v1/copier-groups/{group_id}/pause', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method]?.['x-open-point'], `${method} ${path}`).toBe(true);
    }
  });
});
