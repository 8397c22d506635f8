import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let slave: { id: string; sim: string };

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const acc = (await svc.store.accounts.all()).find((a) => a.platform === 'sim' && a.role === 'slave')!;
  slave = { id: acc.id, sim: acc.brokerAccountId };
});
afterAll(async () => svc?.close());

const open = () =>
  svc.broker.placeOrder(slave.sim, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: new Decimal('0.5'),
    tag: `t${Date.now()}`,
  }).position!;

describe('positions and pending orders of any account', () => {
  it('closes part of a position, then all of it', async () => {
    const p = open();
    const part = await svc.call('POST', `/v1/accounts/${slave.id}/positions/${p.id}/close`, {
      token: key,
      body: { volume: 0.2 },
    });
    expect(part.status).toBe(200);
    expect(part.body.outcome).toBe('confirmed');
    expect(
      svc.broker
        .positions(slave.sim)
        .find((x) => x.id === p.id)!
        .volume.toString(),
    ).toBe('0.3');
    const too = await svc.call('POST', `/v1/accounts/${slave.id}/positions/${p.id}/close`, {
      token: key,
      body: { volume: 5 },
    });
    expect(too.status).toBe(400);
    const all = await svc.call('POST', `/v1/accounts/${slave.id}/positions/${p.id}/close`, { token: key, body: {} });
    expect(all.status).toBe(200);
    expect(svc.broker.positions(slave.sim).some((x) => x.id === p.id)).toBe(false);
  });

  it('sets stop loss and take profit together, and says 409 when the broker does not answer', async () => {
    const p = open();
    const r = await svc.call('PATCH', `/v1/accounts/${slave.id}/positions/${p.id}`, {
      token: key,
      body: { stopLoss: 1.0, takeProfit: 1.3 },
    });
    expect(r.status).toBe(200);
    const after = svc.broker.positions(slave.sim).find((x) => x.id === p.id)!;
    expect([after.stopLoss?.toString(), after.takeProfit?.toString()]).toEqual(['1', '1.3']);
    svc.broker.faults.inject({ op: 'modifyPosition', kind: 'timeout_after_apply', accountId: slave.sim });
    const unknown = await svc.call('PATCH', `/v1/accounts/${slave.id}/positions/${p.id}`, {
      token: key,
      body: { stopLoss: 1.01, takeProfit: null },
    });
    expect(unknown.status).toBe(409);
    expect(unknown.body.code).toBe('write_outcome_unknown');
  });

  it('cancels a pending order; unknown or foreign ids are the same 404', async () => {
    const o = svc.broker.placeOrder(slave.sim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      price: new Decimal('1.0'),
      volume: new Decimal('0.1'),
      tag: 'pend1',
    }).order;
    const r = await svc.call('DELETE', `/v1/accounts/${slave.id}/orders/${o.id}`, { token: key });
    expect(r.status).toBe(200);
    expect(svc.broker.orders(slave.sim).some((x) => x.id === o.id)).toBe(false);
    const again = await svc.call('DELETE', `/v1/accounts/${slave.id}/orders/${o.id}`, { token: key });
    expect(again.status).toBe(404);
    const other = await svc.deps.auth.createUser('x@example.test', 'password-123');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'k');
    const foreign = await svc.call('POST', `/v1/accounts/${slave.id}/positions/123/close`, { token: apiKey, body: {} });
    expect(foreign.status).toBe(404);
  });
});
