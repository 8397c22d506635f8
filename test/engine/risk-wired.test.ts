import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.close());

describe('the risk guard is in the copy path of the running service', () => {
  it("shrinks a copy whose stop loss would breach the Slave's daily loss allowance, and copies the others", async () => {
    const key = svc.demo!.apiKey;
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    const slaves = accounts.filter((a: any) => a.role === 'slave' && a.groupId === master.groupId);
    const guarded = slaves.find((a: any) => a.name.includes('x1'));
    const set = await svc.call('PUT', `/v1/accounts/${guarded.id}/risk-limits`, {
      token: key,
      body: { dailyLossLimit: '50' },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const r = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1, stopLoss: 1.06 },
    });
    expect(r.status).toBe(202);
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/v1/trades/${r.body.tradeId}`, { token: key })).body.copies.every(
            (c: any) => !['planned', 'sent'].includes(c.outcome),
          ),
        { timeout: 10_000 },
      )
      .toBe(true);
    const copies = (await svc.call('GET', `/v1/trades/${r.body.tradeId}`, { token: key })).body.copies;
    const mine = copies.find((c: any) => c.accountId === guarded.id);
    // ~200 USD at the stop for 0.1 lot against a 50 USD allowance: shrunk to the largest step that fits.
    expect(mine.outcome).toBe('confirmed');
    expect(mine.plannedVolume).toBeLessThan(0.1);
    expect(mine.plannedVolume * 100000 * (mine.fillPrice - 1.06)).toBeLessThanOrEqual(50.5);
    expect(copies.filter((c: any) => c.accountId !== guarded.id && c.outcome === 'confirmed').length).toBeGreaterThan(
      0,
    );
  }, 30_000);
});
