import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 13: the platform C OAuth `code` and `state` and an API key sent in a query string were written in
 * clear in the request log line. This runs every flow that creates or carries a secret, with all log output
 * captured, and looks for each secret in it.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
  svc.deps.connectLimit.max = 10; // three platforms' flows for one user; the limit has its own tests
  svc.broker.createAccount({
    balance: '1000',
    currency: 'EUR',
    hedging: true,
    meta: { email: 'logs@broker-b.example', password: 'b-pass-LOGS-1', server: 'SIMB-Live', environment: 'live' },
  });
  svc.broker.createAccount({
    balance: '3000',
    currency: 'USD',
    hedging: true,
    meta: { ctidUserId: 'ctid-logs', environment: 'demo' },
  });
  svc.broker.createAccount({
    login: '88001',
    balance: '4000',
    currency: 'USD',
    hedging: true,
    meta: { server: 'SimA-Live', password: 'mt-pass-LOGS-1', platform: 'mt5' },
  });
});
afterAll(async () => svc?.close());

describe('no secret in any log line (issue 13)', () => {
  it('sign-in, keys, platform A/B/C connects with the C OAuth callback, a webhook secret, keys in query strings', async () => {
    const secrets: Record<string, string> = {};
    secrets.password = 'pw-LOGS-correct-horse';
    await svc.deps.auth.createUser('logs@example.test', secrets.password);
    const signIn = await svc.call('POST', '/app/sign-in', {
      body: { email: 'logs@example.test', password: secrets.password },
    });
    const token = (secrets.accessToken = signIn.body.accessToken);
    const key = await svc.call('POST', '/app/api-keys', { token, body: { name: 'logs' } });
    expect(key.status).toBe(201);
    secrets.apiKey = key.body.apiKey;
    const rotated = await svc.call('POST', `/app/api-keys/${key.body.key.id}/rotate`, { token, body: {} });
    secrets.rotatedKey = rotated.body.apiKey;

    // A careless client: credentials in the query string, with and without the header.
    expect((await svc.call('GET', `/v1/accounts?api_key=${secrets.apiKey}`)).status).toBe(401);
    await svc.call('GET', `/v1/me?access_token=${secrets.rotatedKey}&token=${secrets.accessToken}`, {
      token: secrets.rotatedKey,
    });
    await svc.call('GET', `/api/trading-accounts?password=${encodeURIComponent(secrets.password)}`, { token });

    // Platform B: broker e-mail and password.
    secrets.bPassword = 'b-pass-LOGS-1';
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', email: 'logs@broker-b.example', password: secrets.bPassword, server: 'SIMB-Live' },
    });
    expect(d.status).toBe(200);
    const pick = d.body.accounts[0];
    expect(
      (
        await svc.call('POST', '/api/connect/platformb/confirm', {
          token,
          body: { connectionId: d.body.connectionId, accountId: pick.accountId, accountNumber: pick.accountNumber },
        })
      ).status,
    ).toBe(201);

    // Platform C: the popup's consent redirects to our callback with code and state in the query string.
    const start = await svc.call('POST', '/api/connect/platformc/start', { token, body: {} });
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
    secrets.nonceCookie = cookie.split('=')[1]!;
    const consent = await fetch(`${start.body.authorizationUrl}&user=ctid-logs`, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    secrets.oauthCode = callback.searchParams.get('code')!;
    secrets.oauthState = callback.searchParams.get('state')!;
    expect(secrets.oauthCode.length).toBeGreaterThan(8);
    expect((await fetch(callback, { headers: { cookie } })).status).toBe(200);
    const conn = await svc.call('GET', `/api/connect/platformc/connections/${start.body.connectionId}`, { token });
    const acc = conn.body.accounts[0];
    const c = await svc.call('POST', '/api/connect/platformc/confirm', {
      token,
      body: {
        connectionId: start.body.connectionId,
        ctidTraderAccountId: acc.ctidTraderAccountId,
        accountNumber: acc.accountNumber,
        environment: 'demo',
      },
    });
    expect(c.status).toBe(201);
    const cCreds = svc.deps.box.open<{ accessToken: string; refreshToken: string }>(
      (await svc.deps.store.accounts.credentialsEnc(c.body.id))!,
    );
    secrets.cAccessToken = cCreds.accessToken;
    secrets.cRefreshToken = cCreds.refreshToken;

    // Platform A: trading password.
    secrets.aPassword = 'mt-pass-LOGS-1';
    expect(
      (
        await svc.call('POST', '/api/connect/platforma', {
          token,
          body: { platform: 'mt5', server: 'SimA-Live', login: '88001', password: secrets.aPassword },
        })
      ).status,
    ).toBe(201);

    // A webhook endpoint and its rotated secret.
    const hook = await svc.call('POST', '/v1/webhook-endpoints', {
      token: secrets.rotatedKey,
      body: { url: 'http://127.0.0.1:9/hook' },
    });
    expect(hook.status).toBe(201);
    secrets.webhookSecret = hook.body.secret;
    secrets.webhookRotated = (
      await svc.call('POST', `/v1/webhook-endpoints/${hook.body.id}/rotate-secret`, {
        token: secrets.rotatedKey,
        body: {},
      })
    ).body.secret;

    const all = svc.logs.join('\n');
    expect(all).toContain('/api/connect/platformc/callback?code=[redacted]&state=[redacted]');
    expect(all).toContain('/v1/accounts?api_key=[redacted]');
    for (const [name, value] of Object.entries(secrets)) {
      expect(value, name).toBeTruthy();
      expect(all.includes(value), `${name} appears in the logs`).toBe(false);
      expect(all.includes(encodeURIComponent(value)), `${name} (URL-encoded) appears in the logs`).toBe(false);
    }
  });
});
