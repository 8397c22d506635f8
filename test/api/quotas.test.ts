import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS, loadQuotaConfig } from '../../src/config/quotas-config.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 13: 300 copier groups, 300 webhook endpoints, 300 API keys and 200 event streams on one key were all
 * accepted. Quotas here are set low through the environment; the defaults are checked against the docs' table.
 */
let svc: TestService;
const login = { email: 'quota@broker-b.example', password: 'b-pass-q', server: 'SIMB-Live' };

beforeAll(async () => {
  svc = await startTestService({
    env: {
      COPYTRADE_QUOTA_COPIER_GROUPS: '2',
      COPYTRADE_QUOTA_API_KEYS: '2',
      COPYTRADE_QUOTA_WEBHOOK_ENDPOINTS: '2',
      COPYTRADE_QUOTA_EVENT_STREAMS_PER_KEY: '2',
      COPYTRADE_QUOTA_ACCOUNTS: '1',
      COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    },
  });
  svc.deps.connectLimit.max = 20;
  for (const balance of ['1000', '2000'])
    svc.broker.createAccount({ balance, currency: 'EUR', hedging: true, meta: { ...login, environment: 'live' } });
  svc.broker.createAccount({
    login: '99001',
    balance: '4000',
    currency: 'USD',
    hedging: true,
    meta: { server: 'SimA-Live', password: 'mt-q', platform: 'mt5' },
  });
});
afterAll(async () => svc?.close());

async function user(email: string): Promise<{ token: string; apiKey: string }> {
  await svc.deps.auth.createUser(email, 'password-123');
  const token = (await svc.call('POST', '/app/sign-in', { body: { email, password: 'password-123' } })).body
    .accessToken;
  return {
    token,
    apiKey: (await svc.deps.auth.createApiKey((await svc.deps.store.users.byEmail(email))!.id, 'k')).apiKey,
  };
}

const refused = (r: { status: number; body: any }, status: number, quota: string) => {
  expect(r.status).toBe(status);
  expect(r.body.code).toBe(status === 429 ? 'stream_quota_exceeded' : 'quota_exceeded');
  expect(r.body.quota).toBe(quota);
  expect(r.body.error).toContain(`quota ${quota} exceeded`);
};

describe('per-user quotas (issue 13)', () => {
  it('defaults are the documented numbers; 0 means no limit; nonsense is refused at start', () => {
    expect(loadQuotaConfig({})).toEqual(DEFAULT_QUOTAS);
    expect(DEFAULT_QUOTAS).toEqual({
      copierGroups: 50,
      apiKeys: 20,
      webhookEndpoints: 20,
      accounts: 100,
      eventStreamsPerKey: 5,
    });
    expect(loadQuotaConfig({ COPYTRADE_QUOTA_API_KEYS: '0' }).apiKeys).toBe(0);
    expect(() => loadQuotaConfig({ COPYTRADE_QUOTA_API_KEYS: '-1' })).toThrow(/COPYTRADE_QUOTA_API_KEYS/);
  });

  it('copier groups', async () => {
    const { apiKey } = await user('q-groups@example.test');
    for (const name of ['a', 'b'])
      expect((await svc.call('POST', '/v1/copier-groups', { token: apiKey, body: { name } })).status).toBe(201);
    refused(await svc.call('POST', '/v1/copier-groups', { token: apiKey, body: { name: 'c' } }), 409, 'copierGroups');
    // Another user's groups do not count against this one.
    const other = await user('q-groups-2@example.test');
    expect((await svc.call('POST', '/v1/copier-groups', { token: other.apiKey, body: { name: 'a' } })).status).toBe(
      201,
    );
  });

  it('API keys: a rotation replaces, a revoked key frees its place', async () => {
    const { token } = await user('q-keys@example.test'); // holds one key already
    const second = await svc.call('POST', '/app/api-keys', { token, body: { name: 'two' } });
    expect(second.status).toBe(201);
    refused(await svc.call('POST', '/app/api-keys', { token, body: { name: 'three' } }), 409, 'apiKeys');
    expect((await svc.call('POST', `/app/api-keys/${second.body.key.id}/rotate`, { token, body: {} })).status).toBe(
      201,
    );
    refused(await svc.call('POST', '/app/api-keys', { token, body: { name: 'three' } }), 409, 'apiKeys');
    const keys = (await svc.call('GET', '/app/api-keys?limit=100', { token })).body.keys;
    const live = keys.find((k: any) => k.state === 'active' && k.name === 'two');
    expect((await svc.call('DELETE', `/app/api-keys/${live.id}`, { token })).status).toBe(204);
    expect((await svc.call('POST', '/app/api-keys', { token, body: { name: 'three' } })).status).toBe(201);
  });

  it('webhook endpoints', async () => {
    const { apiKey } = await user('q-hooks@example.test');
    const ids: string[] = [];
    for (const n of [1, 2])
      ids.push(
        (await svc.call('POST', '/v1/webhook-endpoints', { token: apiKey, body: { url: `http://127.0.0.1:9/h${n}` } }))
          .body.id,
      );
    refused(
      await svc.call('POST', '/v1/webhook-endpoints', { token: apiKey, body: { url: 'http://127.0.0.1:9/h3' } }),
      409,
      'webhookEndpoints',
    );
    expect((await svc.call('DELETE', `/v1/webhook-endpoints/${ids[0]}`, { token: apiKey })).status).toBe(204);
    expect(
      (await svc.call('POST', '/v1/webhook-endpoints', { token: apiKey, body: { url: 'http://127.0.0.1:9/h3' } }))
        .status,
    ).toBe(201);
  });

  it('concurrent event streams per key: 429, and a closed stream frees its place', async () => {
    const { apiKey } = await user('q-streams@example.test');
    const open = async () => {
      const ctrl = new AbortController();
      const res = await fetch(`${svc.baseUrl}/v1/events/stream`, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' },
        signal: ctrl.signal,
      });
      return { res, ctrl };
    };
    const a = await open();
    const b = await open();
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
    const c = await open();
    refused({ status: c.res.status, body: await c.res.json() }, 429, 'eventStreamsPerKey');
    a.ctrl.abort();
    await expect
      .poll(
        async () => {
          const d = await open();
          d.ctrl.abort();
          return d.res.status;
        },
        { timeout: 10_000 },
      )
      .toBe(200);
    b.ctrl.abort();
  });

  it('accounts: a new connection past the quota is refused before anything is stored or provisioned; a reconnect still works', async () => {
    const { token } = await user('q-accounts@example.test');
    const d = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...login },
    });
    const [first, second] = d.body.accounts;
    expect(
      (
        await svc.call('POST', '/api/connect/platformb/confirm', {
          token,
          body: { connectionId: d.body.connectionId, accountId: first.accountId, accountNumber: first.accountNumber },
        })
      ).status,
    ).toBe(201);
    const d2 = await svc.call('POST', '/api/connect/platformb/discover', {
      token,
      body: { environment: 'live', ...login },
    });
    refused(
      await svc.call('POST', '/api/connect/platformb/confirm', {
        token,
        body: { connectionId: d2.body.connectionId, accountId: second.accountId, accountNumber: second.accountNumber },
      }),
      409,
      'accounts',
    );
    // Connecting the same broker account again is a reconnect, not a new account.
    expect(
      (
        await svc.call('POST', '/api/connect/platformb/confirm', {
          token,
          body: { connectionId: d2.body.connectionId, accountId: first.accountId, accountNumber: first.accountNumber },
        })
      ).status,
    ).toBe(200);
    refused(
      await svc.call('POST', '/api/connect/platforma', {
        token,
        body: { platform: 'mt5', server: 'SimA-Live', login: '99001', password: 'mt-q' },
      }),
      409,
      'accounts',
    );
    expect(
      (
        await svc.call('GET', '/v1/accounts', {
          token: (await svc.call('POST', '/app/api-keys', { token, body: { name: 'x' } })).body.apiKey,
        })
      ).body.accounts,
    ).toHaveLength(1);
  });
});
