import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../src/auth/auth-service.js';
import { buildServer } from '../../src/api/server.js';
import { Store } from '../../src/store/store.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const order = { symbol: 'EURUSD', side: 'buy', volume: 0.01 };
const POLICY = /^"(writes|reads)";q=(\d+);w=(\d+)$/;
const STATE = /^"(writes|reads)";r=(\d+);t=(\d+)$/;

describe('family V rate limits (spec 8.3) on the embedded store', () => {
  let svc: TestService;
  let key: string;
  let masterId: string;

  beforeAll(async () => {
    // Long window: nothing refills noticeably while a test runs on a busy machine.
    svc = await startTestService({
      env: {
        COPYTRADE_V1_WRITES_PER_WINDOW: '5',
        COPYTRADE_V1_READS_PER_WINDOW: '8',
        COPYTRADE_V1_LIMIT_WINDOW_SEC: '3600',
      },
    });
    key = svc.demo!.apiKey;
    // Through the dashboard: the key's own buckets stay full for the tests.
    const { body } = await svc.call('GET', '/app/v1/accounts', { token: svc.demo!.accessToken });
    masterId = body.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim').id;
  }, 60_000);
  afterAll(async () => svc?.close());

  it('a burst of orders on one key: the first 5 are accepted, the rest get 429 rate_limited with Retry-After; every answer carries RateLimit-Policy and RateLimit', async () => {
    const answers = [];
    for (let i = 0; i < 8; i++)
      answers.push(await svc.call('POST', `/v1/accounts/${masterId}/orders`, { token: key, body: order }));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 429, 429, 429]);
    answers.forEach((a, i) => {
      expect(a.headers.get('ratelimit-policy')).toBe('"writes";q=5;w=3600');
      const [, name, r] = STATE.exec(a.headers.get('ratelimit') ?? '') ?? [];
      expect(name).toBe('writes');
      expect(Number(r)).toBe(Math.max(0, 4 - i));
    });
    const refused = answers[5]!;
    expect(refused.body).toMatchObject({
      code: 'rate_limited',
      error: expect.stringContaining('writes limit'),
      requestId: refused.headers.get('x-request-id'),
    });
    // One token per 720 s at 5 per hour.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(600);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(720);
  });

  it('closes, modifies and cancels draw from the same write bucket; reads have their own, looser one', async () => {
    const close = await svc.call('POST', `/v1/accounts/${masterId}/positions/nope/close`, { token: key, body: {} });
    expect(close.status).toBe(429);
    const cancel = await svc.call('DELETE', `/v1/accounts/${masterId}/orders/nope`, { token: key });
    expect(cancel.status).toBe(429);
    const modify = await svc.call('PATCH', `/v1/accounts/${masterId}/positions/nope`, {
      token: key,
      body: { stopLoss: null, takeProfit: null },
    });
    expect(modify.status).toBe(429);
    const read = await svc.call('GET', '/v1/accounts', { token: key });
    expect(read.status).toBe(200);
    expect(read.headers.get('ratelimit-policy')).toBe('"reads";q=8;w=3600');
  });

  it('panic-close is never refused by the write limit, and says where the bucket stands', async () => {
    const r = await svc.call('POST', `/v1/accounts/${masterId}/panic-close`, { token: key });
    expect([200, 202]).toContain(r.status);
    expect(r.headers.get('ratelimit')).toMatch(/^"writes";r=0;t=\d+$/);
    // Unlock the Master for the other tests (resume is a write: through the dashboard, whose bucket is the user's).
    await expect
      .poll(
        async () =>
          (await svc.call('POST', `/app/v1/accounts/${masterId}/resume`, { token: svc.demo!.accessToken })).status,
        { timeout: 20_000 },
      )
      .toBe(200);
  });

  it('a request refused for the limit claims no Idempotency-Key', async () => {
    const r = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: key,
      body: order,
      headers: { 'idempotency-key': 'limited-1' },
    });
    expect(r.status).toBe(429);
    const user = await svc.store.users.byEmail(svc.demo!.email);
    const rows = (await svc.store.database.db.execute(
      sql`select key from idempotency_keys where user_id = ${user!.id} and key = 'limited-1'`,
    )) as unknown as { rows: unknown[] };
    expect(rows.rows).toHaveLength(0);
  });

  it('the dashboard (/app/v1, access token) has its own bucket per user, with the same headers', async () => {
    const r = await svc.call('GET', '/app/v1/accounts', { token: svc.demo!.accessToken });
    expect(r.status).toBe(200);
    expect(POLICY.exec(r.headers.get('ratelimit-policy') ?? '')?.[1]).toBe('reads');
  });

  it('another key of the same user has a bucket of its own; an operator-set dedicated limit applies at once and its owner sees it', async () => {
    const user = (await svc.store.users.byEmail(svc.demo!.email))!;
    const { key: row, apiKey } = await svc.deps.auth.createApiKey(user.id, 'signal provider');
    const me = await svc.call('GET', '/v1/me', { token: apiKey });
    expect(me.body.credential.rateLimits).toEqual({
      writes: { quota: 5, windowSec: 3600, dedicated: false },
      reads: { quota: 8, windowSec: 3600, dedicated: false },
    });
    await svc.store.credentials.setApiKeyLimits(row.id, { writes: 50, reads: 100 });
    const after = await svc.call('GET', '/v1/me', { token: apiKey });
    expect(after.body.credential.rateLimits).toEqual({
      writes: { quota: 50, windowSec: 3600, dedicated: true },
      reads: { quota: 100, windowSec: 3600, dedicated: true },
    });
    expect(after.headers.get('ratelimit-policy')).toBe('"reads";q=100;w=3600');
    const list = await svc.call('GET', '/app/api-keys', { token: svc.demo!.accessToken });
    expect(list.body.keys.find((k: any) => k.id === row.id).rateLimits.writes).toEqual({
      quota: 50,
      windowSec: 3600,
      dedicated: true,
    });
    // Rotating the key keeps its dedicated limits.
    const rotated = await svc.call('POST', `/app/api-keys/${row.id}/rotate`, {
      token: svc.demo!.accessToken,
      body: { overlapSeconds: 0 },
    });
    expect(rotated.body.key.rateLimits.reads).toEqual({ quota: 100, windowSec: 3600, dedicated: true });
  });

  it('the document describes the headers and the 429 on family V operations', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    const op = doc.paths['/v1/accounts/{account_id}/orders'].post;
    expect(op.responses['429']).toBeDefined();
    expect(Object.keys(op.responses['202'].headers ?? {})).toEqual(
      expect.arrayContaining(['RateLimit-Policy', 'RateLimit']),
    );
    expect(Object.keys(op.responses['429'].headers ?? {})).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit-Policy', 'RateLimit']),
    );
    expect(op.responses['429'].headers['RateLimit-Policy']['x-open-point']).toBe(true);
  });
});

describe('the bucket refills', () => {
  it('once refused, a key is served again when Retry-After has passed', async () => {
    const svc = await startTestService({
      env: { COPYTRADE_V1_READS_PER_WINDOW: '2', COPYTRADE_V1_LIMIT_WINDOW_SEC: '2' },
    });
    try {
      const key = svc.demo!.apiKey;
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await svc.call('GET', '/v1/me', { token: key })).status);
      expect(statuses).toContain(429);
      await expect
        .poll(async () => (await svc.call('GET', '/v1/me', { token: key })).status, { timeout: 10_000, interval: 300 })
        .toBe(200);
    } finally {
      await svc.close();
    }
  }, 60_000);
});

const pgReady = await requirePostgres();

describe.runIf(pgReady)("two API processes on one PostgreSQL store share a key's bucket", () => {
  let svc: TestService;
  let second: Store;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    svc = await startTestService({
      env: { DATABASE_URL: db.url, COPYTRADE_V1_READS_PER_WINDOW: '10', COPYTRADE_V1_LIMIT_WINDOW_SEC: '3600' },
    });
    second = await Store.open({ dataDir: ':memory:', databaseUrl: db.url });
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await second?.close();
    await drop?.();
  });

  it('concurrent reads through both instances: exactly the quota is served in all', async () => {
    expect(svc.store.database.kind).toBe('postgres');
    // A second app on its own connection pool to the same database, as a second `copytrade api` process would be.
    const other = await buildServer(
      { ...svc.deps, store: second, auth: new AuthService(second, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 }) },
      { families: ['r', 'v1'], logger: false },
    );
    try {
      const key = svc.demo!.apiKey;
      const viaA = () => svc.call('GET', '/v1/me', { token: key }).then((r) => r.status);
      const viaB = () =>
        other
          .inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } })
          .then((r) => r.statusCode);
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? viaA() : viaB())));
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
      const last = await other.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
      expect(last.statusCode).toBe(429);
      expect(last.headers['ratelimit']).toMatch(/^"reads";r=0;t=\d+$/);
    } finally {
      await other.close();
    }
  }, 30_000);
});
