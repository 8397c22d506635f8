import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const login = { username: 'dx-trader', domain: 'default', password: 'd-password-1' };
const server = 'dx.broker-d.example';
let logins: string[] = [];

beforeAll(async () => {
  svc = await startTestService();
  // Two live accounts of one DXtrade user, one position-based (hedging) and one netting: the user picks one.
  logins = [true, false].map(
    (hedging, i) =>
      svc.broker.createAccount({
        balance: i === 0 ? '3000' : '4500',
        currency: 'EUR',
        hedging,
        meta: { ...login, environment: 'live' },
      }).login,
  );
});
afterAll(async () => svc?.close());

async function userToken(email: string): Promise<string> {
  await svc.deps.auth.createUser(email, 'password-123');
  return (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body.accessToken;
}

describe('platform D (DXtrade) connection flow', () => {
  it('lists the accounts of a DXtrade user, connects the picked one to a group, and it trades through the adapter', async () => {
    const token = await userToken('d1@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'D group' } })).body;
    const d = await svc.call('POST', '/api/connect/platformd/discover', {
      token,
      body: { environment: 'live', server, ...login },
    });
    expect(d.status).toBe(200);
    expect(d.body.accounts).toEqual([
      { account: `default:${logins[0]}`, currency: 'EUR', balance: 3000, hedging: true },
      { account: `default:${logins[1]}`, currency: 'EUR', balance: 4500, hedging: false },
    ]);
    const c = await svc.call('POST', '/api/connect/platformd/confirm', {
      token,
      body: { connectionId: d.body.connectionId, account: `default:${logins[1]}`, groupId: group.id },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      platform: 'platformd',
      role: 'slave',
      groupId: group.id,
      environment: 'live',
      currency: 'EUR',
    });
    // The connection test read the account through the adapter with the sealed credentials: funds and symbols.
    expect(c.body.connectionTest).toMatchObject({ ok: true, balance: 4500 });
    expect(c.body.connectionTest.symbols).toBeGreaterThan(0);
    // The DXtrade password is stored sealed, not in clear.
    expect(await svc.deps.store.accounts.credentialsEnc(c.body.id)).not.toContain(login.password);
  });

  it('refuses a wrong password without echoing it, and an account the server did not list', async () => {
    const token = await userToken('d2@example.test');
    const wrong = await svc.call('POST', '/api/connect/platformd/discover', {
      token,
      body: { environment: 'live', server, ...login, password: 'nope-d' },
    });
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    expect(wrong.status).toBeLessThan(500);
    expect(wrong.text).not.toContain('nope-d');
    const d = await svc.call('POST', '/api/connect/platformd/discover', {
      token,
      body: { environment: 'live', server, ...login },
    });
    const notListed = await svc.call('POST', '/api/connect/platformd/confirm', {
      token,
      body: { connectionId: d.body.connectionId, account: 'default:999999' },
    });
    expect(notListed.status).toBe(400);
    expect(notListed.body.error).toMatch(/account/);
  });

  it('allows 3 connection requests per 5 minutes per user, then 429 with Retry-After', async () => {
    const token = await userToken('d3@example.test');
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        await svc.call('POST', '/api/connect/platformd/discover', {
          token,
          body: { environment: 'live', server, ...login },
        }),
      );
    expect(statuses.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(statuses[3]!.status).toBe(429);
    expect(Number(statuses[3]!.headers.get('retry-after'))).toBeGreaterThan(290);
  });
});
