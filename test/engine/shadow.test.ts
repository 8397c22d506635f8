import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { ShadowService } from '../../src/engine/shadow.js';
import { createSimAdapterFactory } from '../../src/platforms/sim/factory.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { engineHarness, type EngineHarness } from './harness.js';

describe('shadow mode: the registry decorator', () => {
  let h: EngineHarness;
  let shadow: ShadowService;
  beforeAll(async () => {
    h = await engineHarness();
    shadow = new ShadowService(h.store, h.adapters, h.broker, createSimAdapterFactory(h.broker));
    await shadow.load();
    h.adapters.resolveWith(shadow.resolve);
  });
  afterAll(async () => h?.close());

  it('on: a twin with the broker balance takes every adapter call; off: the broker again', async () => {
    const slave = await h.account({ balance: 7_500 });
    const real = slave.brokerAccountId;
    const on = await shadow.enable(slave);
    expect(on).toMatchObject({
      accountId: slave.id,
      enabled: true,
      startBalance: '7500',
      balance: '7500',
      twinAccountId: expect.any(String),
    });
    expect(on.twinAccountId).not.toBe(real);
    expect((await h.store.accounts.byId(slave.id))!.statusReason).toMatch(/^shadow mode:/);

    const adapter = await h.adapters.forAccount(slave);
    const out = await adapter.placeOrder({
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'shadow-1',
    });
    expect(out.kind).toBe('confirmed');
    expect(h.broker.positions(on.twinAccountId!)).toHaveLength(1);
    expect(h.broker.positions(real)).toHaveLength(0);

    const off = await shadow.disable(slave);
    expect(off.enabled).toBe(false);
    expect((await h.store.accounts.byId(slave.id))!.statusReason).toBeNull();
    expect(await (await h.adapters.forAccount(slave)).listPositions()).toHaveLength(0);
  });

  it('is for Slaves only', async () => {
    const master = await h.account({ role: 'master' });
    await expect(shadow.enable(master)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('survives a restart of the service, and a simulator that forgot the twin gets it back with its start balance', async () => {
    const slave = await h.account({ balance: 3_000 });
    await shadow.enable(slave);
    const again = await engineHarness({ store: h.store, userId: h.userId });
    const restarted = new ShadowService(h.store, again.adapters, again.broker, createSimAdapterFactory(again.broker));
    await restarted.load();
    again.adapters.resolveWith(restarted.resolve);
    expect(restarted.isShadowed(slave.id)).toBe(true);
    expect((await (await again.adapters.forAccount(slave)).accountInfo()).balance.toString()).toBe('3000');
    await again.adapters.closeAll();
  });
});

describe('shadow mode through the service: the ledger previews sizing, fills and slippage', () => {
  let svc: TestService;
  let key: string;
  let masterId: string;
  let slave: { id: string; sim: string };
  beforeAll(async () => {
    svc = await startTestService();
    key = svc.demo!.apiKey;
    const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
    const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    masterId = master.id;
    const s = accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim' && a.groupId === master.groupId);
    slave = { id: s.id, sim: (await svc.deps.store.accounts.byId(s.id))!.brokerAccountId };
  });
  afterAll(async () => svc?.close());

  it('PUT /v1/accounts/{id}/shadow routes copies to the twin; the broker account is untouched', async () => {
    const on = await svc.call('PUT', `/v1/accounts/${slave.id}/shadow`, { token: key, body: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ enabled: true, twinAccountId: expect.any(String) });
    expect((await svc.call('GET', `/v1/accounts/${slave.id}`, { token: key })).body.statusReason).toMatch(
      /^shadow mode:/,
    );
    const realBefore = svc.broker.positions(slave.sim).length;

    const order = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(order.status).toBe(202);
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/v1/trades/${order.body.tradeId}`, { token: key })).body.copies.find(
            (c: any) => c.accountId === slave.id,
          )?.outcome,
        { timeout: 15_000 },
      )
      .toBe('confirmed');
    const row = (await svc.call('GET', `/v1/trades/${order.body.tradeId}`, { token: key })).body.copies.find(
      (c: any) => c.accountId === slave.id,
    );
    expect(row).toMatchObject({
      plannedVolume: expect.any(Number),
      fillPrice: expect.any(Number),
      slippage: expect.any(Number),
    });
    expect(svc.broker.positions(on.body.twinAccountId)).toHaveLength(1);
    expect(svc.broker.positions(slave.sim)).toHaveLength(realBefore);
    // Reads of the account show the twin's book while shadow mode is on.
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/positions`, { token: key })).body.positions).toHaveLength(
      1,
    );

    const off = await svc.call('PUT', `/v1/accounts/${slave.id}/shadow`, { token: key, body: { enabled: false } });
    expect(off.body.enabled).toBe(false);
    expect((await svc.call('GET', `/v1/accounts/${slave.id}/shadow`, { token: key })).body).toMatchObject({
      enabled: false,
      twinAccountId: on.body.twinAccountId,
    });
  });

  it('risk limits are set and read through the routes', async () => {
    const put = await svc.call('PUT', `/v1/accounts/${slave.id}/risk-limits`, {
      token: key,
      body: { dailyLossLimit: '250', maxDrawdownPercent: '8', onBreach: 'close_and_pause' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      targetId: slave.id,
      scope: 'account',
      limits: { dailyLossLimit: 250, maxDrawdownPercent: 8, maxOpenVolume: null, onBreach: 'close_and_pause' },
    });
    const bad = await svc.call('PUT', `/v1/accounts/${slave.id}/risk-limits`, {
      token: key,
      body: { maxDrawdownPercent: '150' },
    });
    expect(bad.status).toBe(400);
    const groupId = (await svc.call('GET', `/v1/accounts/${slave.id}`, { token: key })).body.groupId;
    const g = await svc.call('PUT', `/v1/copier-groups/${groupId}/risk-limits`, {
      token: key,
      body: { maxOpenVolume: '5' },
    });
    expect(g.body).toMatchObject({ scope: 'group', limits: { maxOpenVolume: 5 }, state: null });
    expect((await svc.call('PUT', '/v1/copier-groups/grp_nope/risk-limits', { token: key, body: {} })).status).toBe(
      404,
    );
    expect(
      (await svc.call('GET', `/v1/accounts/${slave.id}/risk-limits`, { token: key })).body.limits.dailyLossLimit,
    ).toBe(250);
  });
});
