import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

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
    expect(await svc.store.accounts.byId(slave.id)).toBeNull();
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
