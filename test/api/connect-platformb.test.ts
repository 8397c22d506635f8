import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const login = { email: 'someone@broker-b.example', password: 'b-password-1', server: 'SIMB-Live' };

beforeAll(async () => {
  svc = await startTestService();
  // Two live accounts under one broker login: the flow must make the user pick and verify one.
  for (const balance of ['1000', '2500'])
    svc.broker.createAccount({ balance, currency: 'EUR', hedging: true, meta: { ...login, environment: 'live' } });
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
