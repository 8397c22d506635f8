import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/cli-process.js';
import { PG_ADMIN_URL, requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const ready = await requirePostgres();

/** The database URL with its host and port replaced by the proxy's. */
function through(proxy: TcpProxy, url: string): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

/**
 * `serve` on PostgreSQL while the database cannot be reached (a relay in front of it, cut: every pooled session
 * dropped and every new one ended at once, as during a restart): every route answers 503 with Retry-After and the
 * error body, never 500; /readyz reports the store; and it all comes back once the database does.
 */
describe.runIf(ready)('serve on PostgreSQL while the store is away', () => {
  let proxy: TcpProxy;
  let svc: TestService;
  let drop: () => Promise<void> = async () => undefined;
  let apiKey = '';
  let masterId = '';

  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    const pg = new URL(PG_ADMIN_URL);
    proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    svc = await startTestService({ env: { DATABASE_URL: through(proxy, db.url) } });
    apiKey = svc.demo!.apiKey;
    const list = await svc.call('GET', '/v1/accounts', { token: apiKey });
    expect(list.status).toBe(200);
    masterId = (list.body.accounts as Array<{ id: string; role: string }>).find((a) => a.role === 'master')!.id;
  });

  afterAll(async () => {
    proxy?.restore();
    await svc?.close();
    await proxy?.close();
    await drop();
  });

  it('never answers 500 on any documented route while the store is away', { timeout: 180_000 }, async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string; required?: boolean }> }>>;
    };
    const token = svc.demo!.accessToken;
    const ops: Array<{ method: string; path: string }> = [];
    for (const [path, item] of Object.entries(doc.paths))
      for (const method of Object.keys(item))
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method))
          ops.push({ method: method.toUpperCase(), path });
    expect(ops.length).toBeGreaterThan(30);
    const logsBefore = svc.logs.length;
    proxy.cut();
    const answers: Array<{ op: string; status: number; code?: string; retryAfter: string | null }> = [];
    try {
      for (const { method, path } of ops) {
        const url = path.replace(/\{account_id\}|\{id\}/g, masterId).replace(/\{[^}]+\}/g, 'x1');
        const headers: Record<string, string> = {
          accept: 'application/json',
          authorization: `Bearer ${path.startsWith('/v1') ? apiKey : token}`,
        };
        const init: RequestInit = { method, headers, signal: AbortSignal.timeout(20_000) };
        if (method !== 'GET' && method !== 'DELETE') {
          headers['content-type'] = 'application/json';
          init.body = '{}';
        }
        const res = await fetch(svc.baseUrl + url, init);
        const text = await res.text();
        let code: string | undefined;
        try {
          code = (JSON.parse(text) as { code?: string }).code;
        } catch {
          code = undefined;
        }
        answers.push({
          op: `${method} ${url}`,
          status: res.status,
          ...(code ? { code } : {}),
          retryAfter: res.headers.get('retry-after'),
        });
      }
    } finally {
      proxy.restore();
    }
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    // /readyz answers 503 with its own body (checked below).
    const unavailable = answers.filter((a) => a.status === 503 && a.op !== 'GET /readyz');
    // Most routes read the store first (authentication does): the sweep must have met the outage.
    expect(unavailable.length).toBeGreaterThan(ops.length / 2);
    for (const a of unavailable) {
      expect(a.code, a.op).toBe('store_unavailable');
      expect(Number(a.retryAfter), a.op).toBeGreaterThan(0);
    }
    expect(svc.logs.slice(logsBefore).join('')).not.toContain('unhandled error');
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    console.log(
      `${answers.length} operations during the outage, by status: ${JSON.stringify(Object.fromEntries(byStatus))}`,
    );
    await until(
      'reads answer 200 again',
      async () => (await svc.call('GET', '/v1/accounts', { token: apiKey })).status === 200,
      30_000,
    );
  });

  it('answers 503 with Retry-After on orders and reads, and recovers', { timeout: 90_000 }, async () => {
    proxy.cut();
    const idempotencyKey = `outage-${Date.now()}`;
    const order = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: apiKey,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
      headers: { 'idempotency-key': idempotencyKey },
    });
    const read = await svc.call('GET', '/v1/accounts', { token: apiKey });
    const trades = await svc.call('GET', '/v1/trades', { token: apiKey });
    for (const r of [order, read, trades]) {
      expect({ status: r.status, body: r.body }).toMatchObject({
        status: 503,
        body: { code: 'store_unavailable', requestId: expect.any(String), error: expect.any(String) },
      });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('x-request-id')).toBe(r.body.requestId);
    }
    // Nothing of the driver's message or the database's address in the body.
    expect(order.text).not.toMatch(/terminated|ECONN|127\.0\.0\.1/);

    const readyz = await svc.call('GET', '/readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.body.checks.store).toMatchObject({ ok: false });

    proxy.restore();
    await until(
      'reads answer 200 again',
      async () => (await svc.call('GET', '/v1/accounts', { token: apiKey })).status === 200,
      30_000,
    );
    await until('readyz 200 again', async () => (await svc.call('GET', '/readyz')).status === 200, 30_000);
    // The retry the 503 asked for, under the same Idempotency-Key: it runs (the 503 was not kept under the key).
    const again = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: apiKey,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
      headers: { 'idempotency-key': idempotencyKey },
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ status: 'accepted', tradeId: expect.any(String) });
  });
});
