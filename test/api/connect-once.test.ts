import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 10 §1: the same MT5 login connected twice (201 both times), the second made a Slave of the first,
 * fed on itself. A broker account is connected once per deployment: its owner connecting it again updates
 * that connection (200, same id); anyone else gets 409 account_already_connected (on platform A once the
 * credentials are proven), and nothing stays provisioned upstream for them.
 */
let svc: TestService;
const bLogin = { email: 'dup@broker-b.example', password: 'b-password-dup', server: 'SIMB-Dup' };

beforeAll(async () => {
  svc = await startTestService();
  // Every flow here runs more connects than the per-user limit allows; the limit has its own test.
  svc.deps.connectLimit.max = 1000;
  svc.broker.createAccount({
    login: '88001',
    balance: '4000',
    currency: 'USD',
    hedging: true,
    meta: { server: 'SimA-Dup', password: 'mt-pass-dup', platform: 'mt5' },
  });
  svc.broker.createAccount({
    balance: '1000',
    currency: 'EUR',
    hedging: true,
    meta: { ...bLogin, environment: 'live' },
  });
  svc.broker.createAccount({
    balance: '3000',
    currency: 'USD',
    hedging: true,
    meta: { ctidUserId: 'ctid-dup', environment: 'demo' },
  });
});
afterAll(async () => svc?.close());

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}
const accountsOf = async (token: string) =>
  (await svc.call('GET', '/app/v1/accounts', { token })).body.accounts as any[];

/** What the MetaApi-style upstream holds: every account provisioned there and not removed. */
async function metaApiAccounts(): Promise<any[]> {
  const a = svc.deps.endpoints.platforma;
  const r = await fetch(`${a.baseUrl}/users/current/accounts`, { headers: { 'auth-token': a.token } });
  return (await r.json()) as any[];
}

describe('platform A: one MT login is connected once', () => {
  it('the loop of the issue cannot be built; another user gets 409 and nothing is provisioned for them', async () => {
    const token = await userToken('a-dup-1@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'A dup' } })).body;
    const body = { platform: 'mt5', server: 'SimA-Dup', login: '88001', password: 'mt-pass-dup' };
    const first = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: { ...body, groupId: group.id, role: 'master' },
    });
    expect(first.status).toBe(201);
    const provisioned = (await metaApiAccounts()).filter((m) => m.login === '88001');
    expect(provisioned).toHaveLength(1);

    // The second connect, as a Slave in the group whose Master is the first: a reconnect of the same connection.
    const again = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: { ...body, groupId: group.id, role: 'slave' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, role: 'master', groupId: group.id });
    expect(await accountsOf(token)).toHaveLength(1);
    // The reconnect's MetaApi account replaces the old one: one upstream account per login.
    const after = (await metaApiAccounts()).filter((m) => m.login === '88001');
    expect(after).toHaveLength(1);
    expect(after[0]._id ?? after[0].id).not.toBe(provisioned[0]._id ?? provisioned[0].id);

    const other = await userToken('a-dup-2@example.test');
    const before = (await metaApiAccounts()).length;
    const dup = await svc.call('POST', '/api/connect/platforma', { token: other, body: { ...body, role: 'slave' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: 'account_already_connected', requestId: expect.any(String) });
    expect(dup.body.error).toMatch(/already connected/);
    expect(dup.text).not.toContain(first.body.id);
    // The server name as typed differently is the same broker identity, but credentials are checked first (issue
    // 46: a refusal before that would tell a prober which logins are connected), and the upstream knows no server
    // ' SIMA-DUP ': the same answer a free login gets with that name. Nothing stays upstream either way.
    const cased = await svc.call('POST', '/api/connect/platforma', {
      token: other,
      body: { ...body, server: ' SIMA-DUP ', role: 'slave' },
    });
    const casedFree = await svc.call('POST', '/api/connect/platforma', {
      token: other,
      body: { ...body, login: '88999', server: ' SIMA-DUP ', role: 'slave' },
    });
    expect(cased.status).not.toBe(201);
    expect([cased.status, cased.body.code]).toEqual([casedFree.status, casedFree.body.code]);
    expect((await metaApiAccounts()).length).toBe(before);
    expect(await accountsOf(other)).toEqual([]);
  }, 60_000);
});

describe('platform B: one TradeLocker account is connected once', () => {
  const connect = async (token: string) => {
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...bLogin },
    });
    expect(d.status).toBe(200);
    const pick = d.body.accounts[0];
    return svc.call('POST', '/api/connect/platformb/confirm', {
      token,
      body: {
        connectionId: d.body.connectionId,
        accountId: pick.accountId,
        accountNumber: pick.accountNumber,
        role: 'slave',
      },
    });
  };

  it('owner again: 200 on the same connection; another user: 409 account_already_connected', async () => {
    const token = await userToken('b-dup-1@example.test');
    const first = await connect(token);
    expect(first.status).toBe(201);
    const again = await connect(token);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await accountsOf(token)).toHaveLength(1);
    const other = await userToken('b-dup-2@example.test');
    const dup = await connect(other);
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('account_already_connected');
    expect(await accountsOf(other)).toEqual([]);
  });
});

describe('platform C: one cTrader account is connected once', () => {
  const connect = async (token: string) => {
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
    const consent = await fetch(`${start.body.authorizationUrl}&user=ctid-dup`, { redirect: 'manual' });
    await fetch(consent.headers.get('location')!, { headers: { cookie } });
    const conn = await svc.call('GET', `/api/connect/platformc/connections/${start.body.connectionId}`, { token });
    const acc = conn.body.accounts.find((a: any) => a.environment === 'demo');
    return svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: acc.ctidTraderAccountId,
        accountNumber: acc.accountNumber,
        environment: 'demo',
      },
    });
  };

  it('owner again: 200 on the same connection with the new tokens; another user: 409 account_already_connected', async () => {
    const token = await userToken('c-dup-1@example.test');
    const first = await connect(token);
    expect(first.status).toBe(201);
    const sealed = await svc.store.accounts.credentialsEnc(first.body.id);
    const again = await connect(token);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await svc.store.accounts.credentialsEnc(first.body.id)).not.toBe(sealed);
    const other = await userToken('c-dup-2@example.test');
    const dup = await connect(other);
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('account_already_connected');
    expect(await accountsOf(other)).toEqual([]);
  });

  it('two connects racing past the check: the unique index refuses the second with the same 409', async () => {
    const a = (await svc.store.accounts.all()).find((x) => x.platform === 'platformc')!;
    const u = await svc.store.users.create('c-race@example.test', 'x');
    await expect(
      svc.store.accounts.create({
        userId: u.id,
        platform: 'platformc',
        role: 'slave',
        name: 'race',
        brokerAccountId: a.brokerAccountId,
        brokerAccountNumber: a.brokerAccountNumber,
        environment: a.environment,
      }),
    ).rejects.toMatchObject({ code: 'account_already_connected' });
  });
});
