import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import { Decimal } from '../../src/domain/decimal.js';

/**
 * Equity history on the server (issue 14): the health monitor's reads become snapshots, at most one per account
 * per minute, one insert per round, pruned past the retention; the route reads them downsampled.
 */
const stores = [{ name: 'pglite', pg: false }, ...((await requirePostgres()) ? [{ name: 'postgres', pg: true }] : [])];

describe.each(stores)('equity history ($name)', { timeout: 90_000 }, ({ pg }) => {
  let svc: TestService;
  let drop: (() => Promise<void>) | undefined;
  let key: string;

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (pg) {
      const db = await tempDatabase();
      drop = db.drop;
      env = { DATABASE_URL: db.url };
    }
    svc = await startTestService({ env: { ...env, COPYTRADE_BROKER_TIMEOUT_MS: '30000' } });
    key = svc.demo!.apiKey;
  }, 90_000);
  afterAll(async () => {
    await svc?.close();
    await drop?.();
  });

  it('writes at most one snapshot per account per minute, in one statement per round, and prunes past the retention', async () => {
    const all = await svc.store.accounts.all();
    const first = all[0]!;
    const ancient = new Date(Date.now() - 40 * 86_400_000);
    await svc.store.equity.insertMany([
      { accountId: first.id, at: ancient, balance: new Decimal(1), equity: new Decimal(1) },
    ]);
    let now = Date.now();
    const monitor = new HealthMonitor(svc.store, svc.deps.adapters, {
      intervalMs: 15_000,
      staleAfterMs: 3_600_000,
      checkTimeoutMs: 30_000,
      clock: () => now,
    });
    const insert = vi.spyOn(svc.store.equity, 'insertMany');
    const count = async () =>
      (await svc.store.equity.series(first.id, new Date(now - 3_600_000), new Date(now + 3_600_000), 1000)).length;

    await monitor.checkAll();
    expect(insert).toHaveBeenCalledTimes(1);
    expect(insert.mock.calls[0]![0].length).toBe(all.length); // every account, one statement
    expect(await count()).toBe(1);
    expect(
      (
        await svc.store.equity.series(
          first.id,
          new Date(ancient.getTime() - 1000),
          new Date(ancient.getTime() + 1000),
          1000,
        )
      ).length,
    ).toBe(0); // pruned (30 days)

    now += 15_000; // a second round within the minute: nothing new
    await monitor.checkAll();
    expect(insert.mock.calls[1]![0]).toEqual([]);
    expect(await count()).toBe(1);

    now += 46_000; // a minute after the first: one more per account
    await monitor.checkAll();
    expect(insert.mock.calls[2]![0].length).toBe(all.length);
    expect(await count()).toBe(2);
    insert.mockRestore();
  });

  it('GET /v1/accounts/{id}/equity-history: range or from/to, downsampled to the last snapshot of each bucket', async () => {
    const acc = (await svc.store.accounts.all()).find((a) => a.role === 'slave')!;
    const end = Math.floor(Date.now() / 60_000) * 60_000 - 3 * 3_600_000; // clear of the monitor test's rows
    const rows = Array.from({ length: 120 }, (_, i) => ({
      accountId: acc.id,
      at: new Date(end - (119 - i) * 60_000),
      balance: new Decimal(1000 + i),
      equity: new Decimal(2000 + i),
    }));
    await svc.store.equity.insertMany(rows);
    const from = new Date(end - 119 * 60_000).toISOString();
    const to = new Date(end).toISOString();
    const r = await svc.call('GET', `/v1/accounts/${acc.id}/equity-history?from=${from}&to=${to}&points=10`, {
      token: key,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.bucketSeconds).toBe(714);
    expect(r.body.points.length).toBeGreaterThanOrEqual(10);
    expect(r.body.points.length).toBeLessThanOrEqual(11);
    const last = r.body.points.at(-1);
    expect(last).toEqual({ t: to, balance: 1119, equity: 2119 }); // the last snapshot, not an average
    const ts = r.body.points.map((p: any) => Date.parse(p.t));
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);

    const full = await svc.call('GET', `/v1/accounts/${acc.id}/equity-history?from=${from}&to=${to}&points=1000`, {
      token: key,
    });
    expect(full.body.points).toHaveLength(120); // a bucket is never under a minute

    const hour = await svc.call('GET', `/v1/accounts/${acc.id}/equity-history?range=1h`, { token: key });
    expect(hour.status).toBe(200);
    expect(hour.body.points.every((p: any) => Date.parse(p.t) >= Date.parse(hour.body.from))).toBe(true);
    expect(Date.parse(hour.body.to) - Date.parse(hour.body.from)).toBe(3_600_000);

    expect((await svc.call('GET', `/v1/accounts/${acc.id}/equity-history?range=2d`, { token: key })).status).toBe(400);
    expect(
      (await svc.call('GET', `/v1/accounts/${acc.id}/equity-history?range=1h&from=${from}`, { token: key })).status,
    ).toBe(400);
    const other = await svc.deps.auth.createUser(`eq-${Date.now()}@example.test`, 'other-password');
    const foreign = await svc.store.accounts.create({
      userId: other.id,
      platform: 'sim',
      role: 'slave',
      name: 'theirs',
      brokerAccountId: `x-${Date.now()}`,
      brokerAccountNumber: '1',
    });
    expect((await svc.call('GET', `/v1/accounts/${foreign.id}/equity-history`, { token: key })).status).toBe(404);
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/accounts/{account_id}/equity-history'].get['x-open-point']).toBe(true);
    // The dashboard's mirror serves it with the access token.
    expect(
      (await svc.call('GET', `/app/v1/accounts/${acc.id}/equity-history?range=7d`, { token: svc.demo!.accessToken }))
        .status,
    ).toBe(200);
  });

  it('removing an account removes its history', async () => {
    const acc = (await svc.store.accounts.all()).find((a) => a.name === 'Demo Slave (A group)')!;
    await svc.store.equity.insertMany([
      { accountId: acc.id, at: new Date(), balance: new Decimal(5), equity: new Decimal(5) },
    ]);
    expect((await svc.call('DELETE', `/v1/accounts/${acc.id}`, { token: key })).status).toBe(204);
    expect(await svc.store.equity.series(acc.id, new Date(0), new Date(Date.now() + 1000), 60_000)).toEqual([]);
  });
});
