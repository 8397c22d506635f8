import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let token: string;
let b: { id: string; sim: string };
let c: { id: string; sim: string };

beforeAll(async () => {
  svc = await startTestService();
  token = svc.demo!.accessToken;
  const all = await svc.store.accounts.all();
  const simOf = (n: string) => svc.broker.accounts().find((s) => s.login === n)!.id;
  const bAcc = all.find((a) => a.platform === 'platformb')!;
  const cAcc = all.find((a) => a.platform === 'platformc')!;
  b = { id: bAcc.id, sim: simOf(bAcc.brokerAccountNumber) };
  c = { id: cAcc.id, sim: simOf(cAcc.brokerAccountNumber) };
  // Warm the adapters so sign-in and account auth are not what the faults hit.
  expect((await svc.call('GET', `/api/trading-accounts/${b.id}/positions`, { token })).status).toBe(200);
  expect((await svc.call('GET', `/api/platformc/accounts/${c.id}/positions`, { token })).status).toBe(200);
});
afterAll(async () => svc?.close());

const expectError = (r: { status: number; body: any; headers: Headers }, status: number, code: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body).toMatchObject({ code, error: expect.any(String), requestId: r.headers.get('x-request-id') });
};

describe('family R error table through the real adapters (spec 7)', () => {
  it('429 with Retry-After when platform B limited us', async () => {
    svc.broker.faults.inject({ op: 'read', kind: 'rate_limit', accountId: b.sim, retryAfterSec: 7, times: 3 });
    const r = await svc.call('GET', `/api/trading-accounts/${b.id}/positions`, { token });
    expectError(r, 429, 'rate_limited');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    svc.broker.faults.clear();
  });

  it('503 on a network error reading platform B', async () => {
    svc.broker.faults.inject({ op: 'read', kind: 'reset', accountId: b.sim, times: 3 });
    expectError(await svc.call('GET', `/api/trading-accounts/${b.id}/orders`, { token }), 503, 'upstream_unavailable');
    svc.broker.faults.clear();
  });

  it('409 reconnect_required when platform C needs OAuth again', async () => {
    svc.broker.faults.inject({ op: 'read', kind: 'token_invalidated', accountId: c.sim, times: 5 });
    expectError(
      await svc.call('GET', `/api/platformc/accounts/${c.id}/positions`, { token }),
      409,
      'reconnect_required',
    );
    svc.broker.faults.clear();
  });

  it('409 write_outcome_unknown when a platform B write timed out, and nothing is duplicated', async () => {
    const key = svc.demo!.apiKey;
    // Make the B account a Master of its own group and send it an order whose answer never comes.
    const g = (await svc.call('POST', '/v1/copier-groups', { token: key, body: { name: 'B master' } })).body;
    expect(
      (
        await svc.call('PUT', `/v1/accounts/${b.id}/assignment`, {
          token: key,
          body: { groupId: g.id, role: 'master' },
        })
      ).status,
    ).toBe(200);
    // A first order warms the adapter (instrument specs), so the faults below hit only the write and its lookup.
    expect(
      (
        await svc.call('POST', `/v1/accounts/${b.id}/orders`, {
          token: key,
          body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
        })
      ).status,
    ).toBe(202);
    const before = svc.broker.positions(b.sim).length;
    svc.broker.faults.inject({ op: 'placeOrder', kind: 'timeout_after_apply', accountId: b.sim, delayMs: 2000 });
    // The lookup by tag is also made to fail, so the outcome stays unknown at answer time.
    svc.broker.faults.inject({ op: 'read', kind: 'reset', accountId: b.sim, times: 20 });
    const r = await svc.call('POST', `/v1/accounts/${b.id}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expectError(r, 409, 'write_outcome_unknown');
    expect(r.body.tradeId).toMatch(/^trd_/);
    svc.broker.faults.clear();
    // The broker did apply it once; the service did not send it again.
    expect(svc.broker.positions(b.sim).length).toBe(before + 1);
  }, 20_000);
});
