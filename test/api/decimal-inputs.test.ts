import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Family V's number convention (docs/open-points.md, "Numbers in family V"): answers carry amounts, prices,
 * volumes and percentages as JSON numbers; requests may send each of our own fields as a number or a decimal
 * string, and both give the same result. The spec's order-request fields stay JSON numbers (V5).
 */
let svc: TestService;
let key: string;
let masterId: string;
let slaveId: string;
let groupId: string;

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const accounts = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts;
  const master = accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  groupId = master.groupId;
  slaveId = accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim' && a.groupId === groupId).id;
});
afterAll(async () => svc?.close());

const v1 = (method: string, path: string, body?: unknown) =>
  svc.call(method, path, { token: key, ...(body === undefined ? {} : { body }) });

describe('numbers in family V: number or decimal string in, JSON number out', () => {
  it('copy rule: both forms save the same rule, read back as numbers', async () => {
    const asNumbers = await v1('PUT', `/v1/accounts/${slaveId}/copy-rule`, {
      sizing: { mode: 'multiplier', multiplier: 0.5 },
      minVolume: 0.01,
      maxVolume: 2,
      maxSlippage: 0.0005,
    });
    expect(asNumbers.status, JSON.stringify(asNumbers.body)).toBe(200);
    const asStrings = await v1('PUT', `/v1/accounts/${slaveId}/copy-rule`, {
      sizing: { mode: 'multiplier', multiplier: '0.5' },
      minVolume: '0.01',
      maxVolume: '2',
      maxSlippage: '0.0005',
    });
    expect(asStrings.status, JSON.stringify(asStrings.body)).toBe(200);
    expect(asStrings.body).toEqual(asNumbers.body);
    expect(asNumbers.body).toMatchObject({
      sizing: { mode: 'multiplier', multiplier: 0.5 },
      minVolume: 0.01,
      maxVolume: 2,
      maxSlippage: 0.0005,
    });
    const group = (await v1('GET', `/v1/copier-groups/${groupId}`)).body;
    expect(group.slaves.find((s: any) => s.id === slaveId).rule).toMatchObject({
      sizing: { multiplier: 0.5 },
      minVolume: 0.01,
      maxSlippage: 0.0005,
    });
    // Stored exactly: the engine sees the decimal typed, not a float's expansion.
    const owner = (await svc.deps.store.accounts.byId(slaveId))!.userId;
    const stored = (await svc.deps.store.accounts.groupView(owner, groupId))!.slaves.find(
      (s) => s.id === slaveId,
    )!.rule;
    expect(stored).toMatchObject({ sizing: { multiplier: '0.5' }, minVolume: '0.01', maxSlippage: '0.0005' });
    const fixed = await v1('PUT', `/v1/accounts/${slaveId}/copy-rule`, { sizing: { mode: 'fixed', volume: 0.1 } });
    expect(fixed.body.sizing).toEqual({ mode: 'fixed', volume: 0.1 });
    await v1('PUT', `/v1/accounts/${slaveId}/copy-rule`, { sizing: { mode: 'multiplier', multiplier: 1 } });
  });

  it('risk limits: both forms, read back as numbers; out of range refused in either form', async () => {
    const asNumbers = await v1('PUT', `/v1/accounts/${slaveId}/risk-limits`, {
      maxDrawdownPercent: 8.5,
      dailyLossLimit: 250,
      maxOpenVolume: 1.5,
    });
    expect(asNumbers.status, JSON.stringify(asNumbers.body)).toBe(200);
    expect(asNumbers.body.limits).toMatchObject({ maxDrawdownPercent: 8.5, dailyLossLimit: 250, maxOpenVolume: 1.5 });
    const asStrings = await v1('PUT', `/v1/accounts/${slaveId}/risk-limits`, {
      maxDrawdownPercent: '8.5',
      dailyLossLimit: '250',
      maxOpenVolume: '1.5',
    });
    expect(asStrings.body.limits).toEqual(asNumbers.body.limits);
    for (const bad of [
      { maxDrawdownPercent: 150 },
      { maxDrawdownPercent: '150' },
      { dailyLossLimit: -1 },
      { dailyLossLimit: '-1' },
      { maxOpenVolume: '1,5' },
    ]) {
      const r = await v1('PUT', `/v1/accounts/${slaveId}/risk-limits`, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
    const group = await v1('PUT', `/v1/copier-groups/${groupId}/risk-limits`, { maxOpenVolume: '5' });
    expect(group.body.limits.maxOpenVolume).toBe(5);
    await v1('PUT', `/v1/accounts/${slaveId}/risk-limits`, {
      maxDrawdownPercent: null,
      dailyLossLimit: null,
      maxOpenVolume: null,
    });
    await v1('PUT', `/v1/copier-groups/${groupId}/risk-limits`, { maxOpenVolume: null });
  });

  it("positions: a partial close and a stop loss take either form; the panic-close report's volumes are numbers", async () => {
    const order = await v1('POST', `/v1/accounts/${masterId}/orders`, { symbol: 'EURUSD', side: 'buy', volume: 0.3 });
    expect(order.status).toBe(202);
    const positionId = order.body.masterPositionId as string;
    const at = async () =>
      (await v1('GET', `/v1/accounts/${masterId}/positions`)).body.positions.find((p: any) => p.id === positionId);
    expect((await at()).volume).toBe(0.3);
    expect((await v1('POST', `/v1/accounts/${masterId}/positions/${positionId}/close`, { volume: 0.1 })).status).toBe(
      200,
    );
    expect((await v1('POST', `/v1/accounts/${masterId}/positions/${positionId}/close`, { volume: '0.1' })).status).toBe(
      200,
    );
    expect((await at()).volume).toBe(0.1);
    const price = (await at()).openPrice as number;
    const sl = (price - 0.01).toFixed(4);
    const sl2 = Number((price - 0.02).toFixed(4));
    expect(
      (await v1('PATCH', `/v1/accounts/${masterId}/positions/${positionId}`, { stopLoss: sl, takeProfit: null }))
        .status,
    ).toBe(200);
    expect((await at()).stopLoss).toBe(Number(sl));
    expect(
      (await v1('PATCH', `/v1/accounts/${masterId}/positions/${positionId}`, { stopLoss: sl2, takeProfit: null }))
        .status,
    ).toBe(200);
    expect((await at()).stopLoss).toBe(sl2);
    for (const bad of [{ volume: 0 }, { volume: '0' }, { volume: '0.1.2' }]) {
      expect(
        (await v1('POST', `/v1/accounts/${masterId}/positions/${positionId}/close`, bad)).status,
        JSON.stringify(bad),
      ).toBe(400);
    }

    const panic = await svc.call('POST', `/v1/accounts/${masterId}/panic-close`, {
      token: key,
      headers: { prefer: 'wait=20' },
    });
    expect(panic.status, JSON.stringify(panic.body)).toBe(200);
    expect(panic.body.positions.length).toBeGreaterThan(0);
    for (const p of panic.body.positions) {
      expect(typeof p.volume).toBe('number');
      if (p.closePrice !== null) expect(typeof p.closePrice).toBe('number');
    }
    const job = (await v1('GET', `/v1/panic-close-jobs/${panic.body.jobId}`)).body;
    expect(typeof job.progress.accounts[0].positions[0].volume).toBe('number');
    await v1('POST', `/v1/accounts/${masterId}/resume`);
  });

  it("the spec's order fields stay JSON numbers (V5); our price takes either form", async () => {
    const asString = await v1('POST', `/v1/accounts/${masterId}/orders`, {
      symbol: 'EURUSD',
      side: 'buy',
      volume: '0.1',
    });
    expect(asString.status).toBe(400);
    const limit = await v1('POST', `/v1/accounts/${masterId}/orders`, {
      symbol: 'EURUSD',
      side: 'buy',
      volume: 0.1,
      type: 'limit',
      price: '0.5',
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(202);
    const orders = (await v1('GET', `/v1/accounts/${masterId}/orders`)).body.orders;
    expect(orders.find((o: any) => o.price === 0.5 && o.type === 'limit')).toBeTruthy();
  });
});
