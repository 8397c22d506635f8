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

  it('answers 503 with Retry-After on orders and reads, and recovers', { timeout: 90_000 }, async () => {
    proxy.cut();
    const order = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: apiKey,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
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
    const again = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: apiKey,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
    });
    expect(again.status).toBe(202);
  });
});
