import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 5: a platform A connect with a wrong password answered 409 account_already_connected for a
 * login someone had connected and 422 otherwise, so any user could learn which logins are connected here. The
 * credentials are checked first: a wrong password is the same 422 either way, and only a caller who proved the
 * login (the right password) learns that another user holds it.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
  svc.deps.connectLimit.max = 1000;
  for (const login of ['88101', '88102'])
    svc.broker.createAccount({
      login,
      balance: '4000',
      currency: 'USD',
      hedging: true,
      meta: { server: 'SimA-Enum', password: `mt-pass-${login}`, platform: 'mt5' },
    });
}, 60_000);
afterAll(async () => svc?.close());

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}
const connect = (token: string, login: string, password: string) =>
  svc.call('POST', '/api/connect/platforma', {
    token,
    body: { platform: 'mt5', server: 'SimA-Enum', login, password },
  });
const metaApiCount = async () => {
  const a = svc.deps.endpoints.platforma;
  const r = await fetch(`${a.baseUrl}/users/current/accounts`, { headers: { 'auth-token': a.token } });
  return ((await r.json()) as unknown[]).length;
};

describe('platform A connect does not reveal who connected a login', () => {
  it('a wrong password is the same 422 for a connected login and a free one', async () => {
    const owner = await userToken('enum-owner@example.test');
    expect((await connect(owner, '88101', 'mt-pass-88101')).status).toBe(201);

    const prober = await userToken('enum-prober@example.test');
    const held = await connect(prober, '88101', 'not-the-password');
    const free = await connect(prober, '88102', 'not-the-password');
    expect(held.status, JSON.stringify(held.body)).toBe(422);
    expect(free.status, JSON.stringify(free.body)).toBe(422);
    expect(held.body.code).toBe('broker_auth_failed');
    expect(held.body.error).toBe(free.body.error);
  }, 60_000);

  it('the right password of a login another user holds: 409, and nothing stays upstream', async () => {
    const other = await userToken('enum-other@example.test');
    const before = await metaApiCount();
    const dup = await connect(other, '88101', 'mt-pass-88101');
    expect(dup.status, JSON.stringify(dup.body)).toBe(409);
    expect(dup.body.code).toBe('account_already_connected');
    expect(await metaApiCount()).toBe(before);
  }, 60_000);
});
