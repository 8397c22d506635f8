import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
  svc.broker.createAccount({
    balance: '3000',
    currency: 'USD',
    hedging: true,
    meta: { ctidUserId: 'ctid-alice', environment: 'demo' },
  });
  svc.broker.createAccount({
    balance: '9000',
    currency: 'USD',
    hedging: true,
    meta: { ctidUserId: 'ctid-alice', environment: 'live' },
  });
  svc.broker.createAccount({
    login: '77001',
    balance: '4000',
    currency: 'USD',
    hedging: true,
    meta: { server: 'SimA-Live', password: 'mt-pass-1', platform: 'mt5' },
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

/** The cookie /start set in the browser that started the flow. */
const cookieOf = (r: { headers: Headers }) => (r.headers.get('set-cookie') ?? '').split(';')[0]!;

/**
 * What the popup does: open the authorization URL; the simulator's consent page approves for `user` and
 * redirects back to our callback, where the browser sends the cookie /start set.
 */
async function approveInPopup(
  authorizationUrl: string,
  ctidUser: string,
  cookie: string,
  deny = false,
): Promise<{ status: number; text: string }> {
  const consent = await fetch(`${authorizationUrl}&user=${ctidUser}${deny ? '&deny=1' : ''}`, { redirect: 'manual' });
  const back = await fetch(consent.headers.get('location')!, { headers: cookie ? { cookie } : {} });
  return { status: back.status, text: await back.text() };
}

describe('platform C connection flow (OAuth popup)', () => {
  it('start -> popup approval -> callback -> account list -> verify account and environment -> connected in a group', async () => {
    const token = await userToken('c1@example.test');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'C group' } })).body;
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    expect(start.status).toBe(200);
    expect(start.body.authorizationUrl).toContain('redirect_uri=');
    const page = (await approveInPopup(start.body.authorizationUrl, 'ctid-alice', cookieOf(start))).text;
    expect(page).toContain('copytrade:platformc');
    expect(page).not.toMatch(/accessToken|refreshToken/);
    const conn = await svc.call('GET', `/api/connect/platformc/connections/${start.body.connectionId}`, { token });
    expect(conn.body.status).toBe('authorized');
    expect(conn.body.accounts.map((a: any) => a.environment).sort()).toEqual(['demo', 'live']);
    const live = conn.body.accounts.find((a: any) => a.environment === 'live');
    // Environment must match the account: picking the live account as demo is refused.
    const wrongEnv = await svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: live.ctidTraderAccountId,
        accountNumber: live.accountNumber,
        environment: 'demo',
      },
    });
    expect(wrongEnv.status).toBe(400);
    expect(wrongEnv.body.error).toMatch(/live account, not demo/);
    const ok = await svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: live.ctidTraderAccountId,
        accountNumber: live.accountNumber,
        environment: 'live',
        groupId: group.id,
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ platform: 'platformc', environment: 'live', groupId: group.id, balance: 9000 });
    const listed = await svc.call('GET', '/api/platformc/accounts', { token });
    expect(listed.body.data.map((a: any) => a.id)).toEqual([ok.body.id]);
    const positions = await svc.call('GET', `/api/platformc/accounts/${ok.body.id}/positions`, { token });
    expect(positions.status).toBe(200);
    expect(positions.body).toEqual({ success: true, data: [], nextCursor: null });
  });

  it('a denied approval is reported, and confirm before approval is refused', async () => {
    const token = await userToken('c2@example.test');
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    const early = await svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: '1',
        accountNumber: '1',
        environment: 'demo',
      },
    });
    expect(early.status).toBe(409);
    await approveInPopup(start.body.authorizationUrl, 'ctid-alice', cookieOf(start), true);
    const conn = await svc.call('GET', `/api/connect/platformc/connections/${start.body.connectionId}`, { token });
    expect(conn.body).toMatchObject({ status: 'failed', error: 'access was not approved' });
  });

  it('a forged callback state is refused', async () => {
    const res = await fetch(`${svc.baseUrl}/api/connect/platformc/callback?code=x&state=con_forged.nonce`);
    expect(res.status).toBe(400);
  });

  it("an approval made in another browser (a victim sent the attacker's link) is refused, and a settled connection takes no second callback", async () => {
    const token = await userToken('c3@example.test');
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    const victim = await approveInPopup(start.body.authorizationUrl, 'ctid-alice', '');
    expect(victim.status).toBe(400);
    expect(
      (await svc.call('GET', `/api/connect/platformc/connections/${start.body.connectionId}`, { token })).body.status,
    ).toBe('pending');
    expect((await approveInPopup(start.body.authorizationUrl, 'ctid-alice', cookieOf(start))).status).toBe(200);
    expect((await approveInPopup(start.body.authorizationUrl, 'ctid-alice', cookieOf(start))).status).toBe(400);
  });
});

describe('platform A connection flow (MetaApi-style upstream)', () => {
  it('searches the server, connects with login and trading password, waits for the connection, assigns to a group', async () => {
    const token = await userToken('a1@example.test');
    const servers = await svc.call('GET', '/api/connect/platforma/servers?query=SimA&platform=mt5', { token });
    expect(servers.status).toBe(200);
    expect(servers.body.servers.flatMap((g: any) => g.servers)).toContain('SimA-Live');
    const group = (await svc.call('POST', '/app/v1/copier-groups', { token, body: { name: 'A group' } })).body;
    const r = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: {
        platform: 'mt5',
        server: 'SimA-Live',
        login: '77001',
        password: 'mt-pass-1',
        groupId: group.id,
        role: 'master',
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      platform: 'platforma',
      role: 'master',
      accountNumber: '77001',
      groupId: group.id,
      balance: 4000,
    });
    const pos = await svc.call('GET', `/app/v1/accounts/${r.body.id}/positions`, { token });
    expect(pos.status).toBe(200);
  }, 30_000);

  it('a wrong password or an unknown server is a clear 4xx (422 broker_auth_failed for the password), never a stuck account', async () => {
    const token = await userToken('a2@example.test');
    // 77001 is connected by the test above (a second connection would be 409 before any check of the password).
    const wrong = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: { platform: 'mt5', server: 'SimA-Live', login: '77002', password: 'wrong', role: 'slave' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.text).not.toContain('wrong"');
    const unknown = await svc.call('POST', '/api/connect/platforma', {
      token,
      body: { platform: 'mt5', server: 'Nope-Server', login: '77002', password: 'mt-pass-2' },
    });
    expect(unknown.status).toBe(400);
    expect((await svc.call('GET', '/app/v1/accounts', { token })).body.accounts).toEqual([]);
  }, 30_000);
});

describe('platform C wizard without the application credentials', () => {
  it('refuses to start with 409 platform_not_configured naming the settings, and counts no attempt', async () => {
    const token = await userToken('nocreds@example.test');
    const c = svc.deps.endpoints.platformc;
    const saved = { clientId: c.clientId, clientSecret: c.clientSecret };
    c.clientId = '';
    c.clientSecret = '';
    // More refusals than the limit allows attempts (3 per 5 minutes): none of them may count.
    for (let i = 0; i < 4; i++) {
      const r = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({
        code: 'platform_not_configured',
        settings: ['COPYTRADE_PLATFORMC_CLIENT_ID', 'COPYTRADE_PLATFORMC_CLIENT_SECRET'],
        requestId: expect.any(String),
      });
      expect(r.body.error).toMatch(/COPYTRADE_PLATFORMC_CLIENT_ID and COPYTRADE_PLATFORMC_CLIENT_SECRET/);
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    c.clientSecret = saved.clientSecret;
    const onlyId = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    expect(onlyId.body).toMatchObject({ code: 'platform_not_configured', settings: ['COPYTRADE_PLATFORMC_CLIENT_ID'] });
    // Configured again: the user still has all three attempts of the window, and the fourth is the limit's 429.
    c.clientId = saved.clientId;
    for (let i = 0; i < 3; i++) {
      const r = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(new URL(r.body.authorizationUrl).searchParams.get('client_id')).toBe(saved.clientId);
    }
    const fourth = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    expect(fourth.status).toBe(429);
  });

  it('an unauthenticated caller still gets 401 first (the refusal tells nothing about the setup)', async () => {
    const c = svc.deps.endpoints.platformc;
    const saved = c.clientId;
    c.clientId = '';
    try {
      const r = await svc.call('POST', '/api/connect/platformc/start', { body: {} });
      expect(r.status).toBe(401);
    } finally {
      c.clientId = saved;
    }
  });
});
