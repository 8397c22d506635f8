import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';

const ready = (await requirePostgres()) && (await requireNats());

describe.runIf(ready)('the whole service on PostgreSQL with NATS', () => {
  let svc: TestService;
  let drop: () => Promise<void>;
  let dbUrl: string;

  beforeAll(async () => {
    const db = await tempDatabase();
    drop = db.drop;
    dbUrl = db.url;
    svc = await startTestService({ env: { DATABASE_URL: db.url, NATS_URL } });
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await drop?.();
  });

  it('runs the order pipeline end to end: the Master fills, every eligible Slave gets its copy, the ledger says so', async () => {
    expect(svc.store.database.kind).toBe('postgres');
    const key = svc.demo!.apiKey;
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    const slaves = accounts.filter((a: any) => a.role === 'slave' && a.groupId === master.groupId);
    const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'XAUUSD', side: 'sell', volume: 0.1 },
    });
    expect(
      r.status,
      JSON.stringify(r.body) +
        svc.logs
          .filter((l) => l.includes('"level":50'))
          .join('\n')
          .slice(0, 3000),
    ).toBe(202);
    expect(r.body.copiedTo).toBe(slaves.length);
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/v1/trades/${r.body.tradeId}`, { token: key })).body.copies.filter(
            (c: any) => c.outcome === 'confirmed',
          ).length,
        { timeout: 10_000 },
      )
      .toBe(slaves.length);
    const events = await svc.store.events.after((await svc.store.users.byEmail(svc.demo!.email))!.id, 0, 1000);
    expect(events.filter((e) => e.type === 'copy.confirmed')).toHaveLength(slaves.length);
  }, 30_000);

  it('a second copier on the same database is refused before it serves, naming the one that runs', async () => {
    const second = await startTestService({ env: { DATABASE_URL: dbUrl, NATS_URL } }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(Error);
    expect((second as Error).message).toContain('another `copytrade serve` runs on this database');
    // The first one still serves.
    expect((await svc.call('GET', '/v1/me', { token: svc.demo!.apiKey })).status).toBe(200);
  }, 60_000);
});
