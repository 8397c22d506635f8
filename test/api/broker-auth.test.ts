import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * A broker that refuses the credentials a user typed is not the caller's own credential failing: 401 stays
 * for our access token / API key only, and every platform answers the broker's refusal the same way.
 */

let svc: TestService;
const bLogin = { email: 'someone@broker-b.example', password: 'b-password-1', server: 'SIMB-Live' };

beforeAll(async () => {
  svc = await startTestService();
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
    meta: { ctidUserId: 'ctid-bob', environment: 'demo' },
  });
  svc.broker.createAccount({
    login: '77002',
    balance: '4000',
    currency: 'USD',
    hedging: true,
    meta: { server: 'SimA-Live', password: 'mt-pass-2', platform: 'mt5' },
  });
});
afterAll(async () => svc?.close());

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}

const expectBrokerAuthFailed = (r: { status: number; headers: Headers; body: any; text: string }, secret: string) => {
  expect(r.status, r.text).toBe(422);
  expect(r.body).toMatchObject({
    code: 'broker_auth_failed',
    error: expect.stringMatching(/refused|not authori[sz]ed|not approved/i),
    requestId: r.headers.get('x-request-id'),
  });
  expect(r.headers.get('www-authenticate')).toBeNull();
  expect(r.text).not.toContain(secret);
};

describe("a broker refusing the user's broker credentials: 422 broker_auth_failed on every platform, never 401", () => {
  it('platform B: wrong broker password at discover', async () => {
    const token = await userToken('ba-b@example.test');
    const r = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...bLogin, password: 'not-the-b-password' },
    });
    expectBrokerAuthFailed(r, 'not-the-b-password');
    // The caller's own token still works: it was not the credential that failed.
    expect((await svc.call('GET', '/api/trading-accounts', { token })).status).toBe(200);
  });

  it('platform A: wrong trading password, also when the same wrong credentials are sent again', async () => {
    const token = await userToken('ba-a@example.test');
    const body = { platform: 'mt5', server: 'SimA-Live', login: '77002', password: 'not-the-a-password' };
    expectBrokerAuthFailed(await svc.call('POST', '/api/connect/platforma', { token, body }), 'not-the-a-password');
    expectBrokerAuthFailed(await svc.call('POST', '/api/connect/platforma', { token, body }), 'not-the-a-password');
  }, 30_000);

  it('platform C: the user denied the approval at the broker, then confirms', async () => {
    const token = await userToken('ba-c@example.test');
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
    const consent = await fetch(`${start.body.authorizationUrl}&user=ctid-bob&deny=1`, { redirect: 'manual' });
    await fetch(consent.headers.get('location')!, { headers: { cookie } });
    const r = await svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: '1',
        accountNumber: '1',
        environment: 'demo',
      },
    });
    expectBrokerAuthFailed(r, 'ctid-bob-secret');
    expect(r.body.error).toMatch(/access was not approved/);
  });

  it('the document lists 422 on the connect routes that reach a broker', async () => {
    const paths = (await svc.call('GET', '/openapi.json')).body.paths;
    for (const p of ['/api/connect/platformb/discover', '/api/connect/platforma', '/api/connect/platformc/confirm']) {
      expect(Object.keys(paths[p].post.responses), p).toContain('422');
    }
  });
});
