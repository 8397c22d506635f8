import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const login = { email: 'someone@broker-b.example', password: 'b-password-1', server: 'SIMB-Live' };
/** A login of its own for the connection tests: two demo accounts, one whose reads the broker will refuse. */
const testLogin = { email: 'tester@broker-b.example', password: 'b-password-9', server: 'SIMB-Test' };
let testSimIds: string[] = [];

beforeAll(async () => {
  svc = await startTestService();
  // Two live accounts under one broker login: the flow must make the user pick and verify one.
  for (const balance of ['1000', '2500'])
    svc.broker.createAccount({ balance, currency: 'EUR', hedging: true, meta: { ...login, environment: 'live' } });
  testSimIds = ['1500', '2600'].map(
    (balance) =>
      svc.broker.createAccount({ balance, currency: 'EUR', hedging: true, meta: { ...testLogin, environment: 'demo' } })
        .id,
  );
});
afterAll(async () => svc?.close());

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}

describe('platform B connection flow (spec table, 4R.4, 8.1)', () => {
  it('discovers the accounts of a login, verifies the picked account number and connects it to a group', async () => {
    const token = await userToken('b1@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'B group' } })).body;
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...login },
    });
    expect(d.status).toBe(200);
    expect(d.body.accounts).toHaveLength(2);
    const pick = d.body.accounts[1];
    const c = await svc.call('POST', '/api/connect/platformb/confirm', {
      token,
      body: {
        connectionId: d.body.connectionId,
        accountId: pick.accountId,
        accountNumber: pick.accountNumber,
        groupId: group.id,
        role: 'master',
      },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      platform: 'platformb',
      role: 'master',
      groupId: group.id,
      environment: 'live',
      accountNumber: pick.accountNumber,
      currency: 'EUR',
    });
    const listed = (await svc.call('GET', '/api/trading-accounts', { token })).body.data;
    expect(listed.map((a: any) => a.id)).toEqual([c.body.id]);
    // The account works through the adapter with the sealed credentials.
    const caps = await svc.call('GET', `/api/trading-accounts/${c.body.id}/positions`, { token });
    expect(caps.status).toBe(200);
    // The broker password is stored sealed, not in clear.
    expect(await svc.deps.store.accounts.credentialsEnc(c.body.id)).not.toContain(login.password);
  });

  it('refuses a wrong account number, a wrong password and unknown fields with clear 4xx', async () => {
    const token = await userToken('b2@example.test');
    const wrongPw = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...login, password: 'nope' },
    });
    expect(wrongPw.status).toBeGreaterThanOrEqual(400);
    expect(wrongPw.status).toBeLessThan(500);
    expect(wrongPw.text).not.toContain('nope');
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...login },
    });
    const mismatch = await svc.call('POST', '/api/connect/platformb/confirm', {
      token,
      body: { connectionId: d.body.connectionId, accountId: d.body.accounts[0].accountId, accountNumber: '999' },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatch(/account number/i);
  });

  it('allows 3 connection requests per 5 minutes per user, then 429 with Retry-After', async () => {
    const token = await userToken('b3@example.test');
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        await svc.call('POST', '/api/connect/platformb/discover', { token, body: { environment: 'live', ...login } }),
      );
    expect(statuses.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(statuses[3]!.status).toBe(429);
    expect(Number(statuses[3]!.headers.get('retry-after'))).toBeGreaterThan(290);
    // Another user is not affected.
    const other = await userToken('b4@example.test');
    expect(
      (
        await svc.call('POST', '/api/connect/platformb/discover', {
          token: other,
          body: { environment: 'live', ...login },
        })
      ).status,
    ).toBe(200);
  });

  it('a connection id of another user is the same 404 as an unknown one', async () => {
    const a = await userToken('b5@example.test');
    const b = await userToken('b6@example.test');
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token: a,
      body: { environment: 'live', ...login },
    });
    const body = { accountId: d.body.accounts[0].accountId, accountNumber: d.body.accounts[0].accountNumber };
    const foreign = await svc.call('POST', '/api/connect/platformb/confirm', {
      token: b,
      body: { connectionId: d.body.connectionId, ...body },
    });
    const unknown = await svc.call('POST', '/api/connect/platformb/confirm', {
      token: b,
      body: { connectionId: 'con_nope', ...body },
    });
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(foreign.body.error).toBe(unknown.body.error);
  });
});

/** The platform B wizard up to its last step (the connection tests' login), for the account whose balance is `balance`. */
async function connect(token: string, balance: number, groupId: string, beforeConfirm = () => {}) {
  const d = await svc.call('POST', '/api/connect/platformb/discover', {
    token,
    body: { environment: 'demo', ...testLogin },
  });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  const pick = d.body.accounts.find((a: { balance: number }) => a.balance === balance);
  beforeConfirm();
  return svc.call('POST', '/api/connect/platformb/confirm', {
    token,
    body: { connectionId: d.body.connectionId, accountId: pick.accountId, accountNumber: pick.accountNumber, groupId },
  });
}

describe('connection test before copying', () => {
  it('a good read is shown in the connect answer and the account is placed in the chosen group', async () => {
    const token = await userToken('ct-good@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'good' } })).body;
    const c = await connect(token, 1500, group.id);
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body).toMatchObject({
      status: 'connected',
      groupId: group.id,
      balance: 1500,
      connectionTest: {
        ok: true,
        balance: 1500,
        equity: 1500,
        currency: 'EUR',
        // Every instrument the simulated TradeLocker lists for the account.
        symbols: svc.broker.instruments().length,
        positions: 0,
        orders: 0,
        failedRead: null,
        error: null,
        checkedAt: expect.any(String),
      },
    });
    // The same test is there to read later.
    const again = await svc.call('GET', `/app/v1/accounts/${c.body.id}/connection-test`, { token });
    expect(again.body.connectionTest).toEqual(c.body.connectionTest);
  });

  it("a broker refusing a read leaves the account unassigned and unverified with the broker's words; assigning is refused until a test passes", async () => {
    const token = await userToken('ct-refused@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'refused' } })).body;
    const words = 'Account is blocked by the risk desk';
    let fault = '';
    const c = await connect(token, 2600, group.id, () => {
      // After the discovery (its reads pass): every read of this account is now refused by the broker.
      fault = svc.broker.faults.inject({
        op: 'read',
        kind: 'reject',
        accountId: testSimIds[1]!,
        message: words,
        times: 100,
      });
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body).toMatchObject({
      status: 'unverified',
      groupId: null,
      statusReason: expect.stringContaining(words),
      connectionTest: { ok: false, failedRead: 'account', error: expect.stringContaining(words) },
    });
    const assign = await svc.call('PUT', `/app/v1/accounts/${c.body.id}/assignment`, {
      token,
      body: { groupId: group.id, role: 'slave' },
    });
    expect(assign.status).toBe(409);
    expect(assign.body).toMatchObject({ code: 'account_not_connected', error: expect.stringContaining(words) });
    expect(assign.body.error).toMatch(/connection-test/);
    // The health round leaves it unverified: only a passing test makes it assignable.
    const monitor = new HealthMonitor(svc.store, svc.deps.adapters, {
      intervalMs: 0,
      staleAfterMs: 0,
      downAfterMs: 0,
      checkTimeoutMs: 2000,
    });
    await monitor.check((await svc.deps.store.accounts.byId(c.body.id))!);
    expect((await svc.deps.store.accounts.byId(c.body.id))!.status).toBe('unverified');
    const retried = await svc.call('POST', `/app/v1/accounts/${c.body.id}/connection-test`, { token });
    expect(retried.body).toMatchObject({ status: 'unverified', connectionTest: { ok: false } });

    svc.broker.faults.remove(fault);
    const passed = await svc.call('POST', `/app/v1/accounts/${c.body.id}/connection-test`, { token });
    expect(passed.status).toBe(200);
    expect(passed.body).toMatchObject({
      status: 'connected',
      statusReason: null,
      groupId: null,
      connectionTest: { ok: true, balance: 2600 },
    });
    const placed = await svc.call('PUT', `/app/v1/accounts/${c.body.id}/assignment`, {
      token,
      body: { groupId: group.id, role: 'slave' },
    });
    expect(placed.status).toBe(200);
    expect(placed.body.groupId).toBe(group.id);
  });

  it("another user's account: the test routes answer 404 as for an unknown id", async () => {
    const other = await userToken('ct-other@example.test');
    // The demo user's accounts: someone else's.
    const id = (await svc.deps.store.accounts.all())[0]!.id;
    for (const method of ['GET', 'POST']) {
      const foreign = await svc.call(method, `/app/v1/accounts/${id}/connection-test`, { token: other });
      const unknown = await svc.call(method, '/app/v1/accounts/acc_nope/connection-test', { token: other });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe(unknown.body.error);
    }
  });
});
