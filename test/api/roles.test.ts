import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Roles on accounts and groups (docs/people.md), through family V with each user's own API key: a read-only user
 * sees positions, history and reports of what was shared and nothing else (the same 404 as an unknown id), and
 * gets 403 on a write to what it sees; a trader trades but does not manage; only an owner shares.
 */
let svc: TestService;
let ownerKey: string;
let slave: { id: string; sim: string };
let master: { id: string; groupId: string };
let other: string;
const keys: Record<string, string> = {};
const ids: Record<string, string> = {};

const userWithKey = async (email: string) => {
  const u = await svc.deps.auth.createUser(email, 'correct horse battery');
  return { id: u.id, key: (await svc.deps.auth.createApiKey(u.id, 'test')).apiKey };
};

beforeAll(async () => {
  svc = await startTestService();
  ownerKey = svc.demo!.apiKey;
  const accounts = (await svc.store.accounts.all()).filter((a) => a.platform === 'sim');
  const s = accounts.find((a) => a.role === 'slave')!;
  const m = accounts.find((a) => a.role === 'master' && a.groupId)!;
  slave = { id: s.id, sim: s.brokerAccountId };
  master = { id: m.id, groupId: m.groupId! };
  other = accounts.find((a) => a.id !== s.id && a.id !== m.id)!.id;
  for (const who of ['investor', 'trader', 'stranger', 'groupie'])
    ({ key: keys[who]!, id: ids[who]! } = await userWithKey(`${who}@example.test`));
  const grant = (path: string, user: string, role: string) =>
    svc.call('POST', `/v1/${path}/grants`, { token: ownerKey, body: { user, role } });
  expect((await grant(`accounts/${slave.id}`, 'investor@example.test', 'read_only')).status).toBe(200);
  expect((await grant(`accounts/${slave.id}`, 'trader@example.test', 'trader')).status).toBe(200);
  expect((await grant(`copier-groups/${master.groupId}`, 'groupie@example.test', 'read_only')).status).toBe(200);
});
afterAll(async () => svc?.close());

const open = () =>
  svc.broker.placeOrder(slave.sim, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: new Decimal('0.1'),
    tag: `r${Date.now()}`,
  }).position!;

describe('a read-only user', () => {
  it('sees the shared account, its positions, history and reports', async () => {
    const p = open();
    const k = keys.investor!;
    expect((await svc.call('GET', `/v1/accounts/${slave.id}`, { token: k })).status).toBe(200);
    const pos = await svc.call('GET', `/v1/accounts/${slave.id}/positions`, { token: k });
    expect(pos.status).toBe(200);
    expect(JSON.stringify(pos.body)).toContain(p.id);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/history`, { token: k })).status).toBe(200);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/history/stats`, { token: k })).status).toBe(200);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/ledger`, { token: k })).status).toBe(200);
    const shared = await svc.call('GET', '/v1/shared-with-me', { token: k });
    expect(shared.body.shared).toEqual([
      expect.objectContaining({ resourceKind: 'account', resourceId: slave.id, role: 'read_only' }),
    ]);
  });

  it("gets 403 with the service's error body on a write to what it sees", async () => {
    const k = keys.investor!;
    const p = open();
    const writes: Array<[string, string, unknown?]> = [
      ['POST', `/v1/accounts/${slave.id}/positions/${p.id}/close`, {}],
      ['POST', `/v1/accounts/${slave.id}/pause`],
      ['PUT', `/v1/accounts/${slave.id}/copy-rule`, {}],
      ['PUT', `/v1/accounts/${slave.id}/risk-limits`, {}],
      ['POST', `/v1/accounts/${slave.id}/panic-close`, {}],
      ['DELETE', `/v1/accounts/${slave.id}`],
      ['POST', `/v1/accounts/${slave.id}/grants`, { user: 'stranger@example.test', role: 'owner' }],
    ];
    for (const [method, path, body] of writes) {
      const r = await svc.call(method, path, { token: k, ...(body === undefined ? {} : { body }) });
      expect([path, r.status]).toEqual([path, 403]);
      expect(r.body).toMatchObject({ code: 'forbidden', requestId: expect.any(String) });
    }
    expect(svc.broker.positions(slave.sim).some((x) => x.id === p.id)).toBe(true);
  });

  it('gets the same 404 as for an unknown id for what was not shared with it', async () => {
    const k = keys.investor!;
    for (const path of [
      `/v1/accounts/${other}`,
      `/v1/accounts/${other}/positions`,
      `/v1/copier-groups/${master.groupId}`,
      `/v1/accounts/acc_unknown`,
    ]) {
      const r = await svc.call('GET', path, { token: k });
      expect([path, r.status, r.body.code]).toEqual([path, 404, 'not_found']);
    }
    const unknown = await svc.call('POST', '/v1/accounts/acc_unknown/pause', { token: k });
    const foreign = await svc.call('POST', `/v1/accounts/${other}/pause`, { token: k });
    expect([foreign.status, foreign.body.error]).toEqual([unknown.status, unknown.body.error]);
  });
});

describe('a trader', () => {
  it('closes a position but cannot change the copy rule or share', async () => {
    const k = keys.trader!;
    const p = open();
    const close = await svc.call('POST', `/v1/accounts/${slave.id}/positions/${p.id}/close`, { token: k, body: {} });
    expect(close.status).toBe(200);
    expect(svc.broker.positions(slave.sim).some((x) => x.id === p.id)).toBe(false);
    expect((await svc.call('PUT', `/v1/accounts/${slave.id}/copy-rule`, { token: k, body: {} })).status).toBe(403);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/grants`, { token: k })).status).toBe(403);
  });
});

describe('a role on a group', () => {
  it("covers the group and its members' reads", async () => {
    const k = keys.groupie!;
    const g = await svc.call('GET', `/v1/copier-groups/${master.groupId}`, { token: k });
    expect(g.status).toBe(200);
    expect((await svc.call('GET', `/v1/accounts/${master.id}/positions`, { token: k })).status).toBe(200);
    expect((await svc.call('POST', `/v1/copier-groups/${master.groupId}/pause`, { token: k })).status).toBe(403);
    expect((await svc.call('GET', `/v1/copier-groups/${master.groupId}/history/stats`, { token: k })).status).toBe(200);
  });
});

describe('an owner', () => {
  it('lists and revokes a grant; the user then gets 404', async () => {
    const list = await svc.call('GET', `/v1/accounts/${slave.id}/grants`, { token: ownerKey });
    expect(list.body.grants.map((g: { email: string; role: string }) => [g.email, g.role]).sort()).toEqual([
      ['investor@example.test', 'read_only'],
      ['trader@example.test', 'trader'],
    ]);
    const gone = await svc.call('DELETE', `/v1/accounts/${slave.id}/grants/${ids.trader}`, { token: ownerKey });
    expect(gone.status).toBe(204);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}`, { token: keys.trader })).status).toBe(404);
  });

  it('cannot grant an unknown role (400 naming the field) and a stranger cannot grant at all (404)', async () => {
    const bad = await svc.call('POST', `/v1/accounts/${slave.id}/grants`, {
      token: ownerKey,
      body: { user: 'stranger@example.test', role: 'admin' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('role');
    const stranger = await svc.call('POST', `/v1/accounts/${slave.id}/grants`, {
      token: keys.stranger,
      body: { user: 'stranger@example.test', role: 'owner' },
    });
    expect(stranger.status).toBe(404);
  });
});
