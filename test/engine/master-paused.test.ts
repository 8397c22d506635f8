import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.close());

describe('a paused Master is not copied from', () => {
  it('records trades made at its terminal, copies none of them, and copies again once resumed', async () => {
    const key = svc.demo!.apiKey;
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    const simMaster = (await svc.store.accounts.byId(master.id))!.brokerAccountId;
    const slaveSims = (await svc.store.accounts.all())
      .filter((a) => a.groupId === master.groupId && a.platform === 'sim' && a.role === 'slave')
      .map((a) => a.brokerAccountId);
    const count = () => slaveSims.reduce((n, id) => n + svc.broker.positions(id).length, 0);
    const before = count();

    expect((await svc.call('POST', `/v1/accounts/${master.id}/pause`, { token: key })).status).toBe(200);
    svc.broker.placeOrder(simMaster, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: new Decimal('0.1'),
      tag: 'by-hand-1',
    });
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/v1/trades?accountId=${master.id}`, { token: key })).body.trades.filter(
            (t: any) => t.source === 'watcher',
          ).length,
        { timeout: 10_000 },
      )
      .toBe(1);
    const trade = (await svc.call('GET', `/v1/trades?accountId=${master.id}`, { token: key })).body.trades.find(
      (t: any) => t.source === 'watcher',
    );
    expect(trade.copies.length).toBeGreaterThan(0);
    for (const c of trade.copies)
      expect(c).toMatchObject({ outcome: 'skipped', skipReason: expect.stringContaining('master_not_eligible') });
    expect(count()).toBe(before);

    expect((await svc.call('POST', `/v1/accounts/${master.id}/resume`, { token: key })).status).toBe(200);
    svc.broker.placeOrder(simMaster, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: new Decimal('0.1'),
      tag: 'by-hand-2',
    });
    await expect.poll(count, { timeout: 10_000 }).toBe(before + slaveSims.length);
  }, 30_000);
});
