import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let slave: { id: string; sim: string };

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const { body } = await svc.call('GET', '/v1/accounts', { token: key });
  const s = body.accounts.find((a: any) => a.role === 'slave' && a.platform === 'sim');
  slave = { id: s.id, sim: (await svc.deps.store.accounts.byId(s.id))!.brokerAccountId };
});
afterAll(async () => svc?.close());

const openPositions = (n: number) => {
  for (let i = 0; i < n; i++) svc.broker.placeOrder(slave.sim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: svc.broker.instrument('EURUSD')!.minVolume, tag: `pc-${Date.now()}-${i}` });
};

describe('panic-close routes start a tracked job', () => {
  it('Prefer: respond-async answers 202 with the job and a Location; the job is readable until it ends flat', async () => {
    openPositions(2);
    svc.broker.faults.inject({ op: 'closePosition', kind: 'delay', delayMs: 150, accountId: slave.sim, times: 2 });
    const r = await svc.call('POST', `/v1/accounts/${slave.id}/panic-close`, { token: key, headers: { prefer: 'respond-async' } });
    expect(r.status).toBe(202);
    expect(r.headers.get('location')).toBe(`/v1/panic-close-jobs/${r.body.id}`);
    expect(r.body).toMatchObject({ id: expect.stringMatching(/^job_/), scope: 'account', targetId: slave.id, state: 'running', progress: { accounts: [{ accountId: slave.id }] } });
    await expect.poll(async () => (await svc.call('GET', r.headers.get('location')!, { token: key })).body.state, { timeout: 10_000 }).toBe('succeeded');
    const job = (await svc.call('GET', r.headers.get('location')!, { token: key })).body;
    expect(job.totals).toMatchObject({ accounts: 1, flat: 1, remaining: 0, closed: 2 });
    expect(svc.broker.positions(slave.sim)).toEqual([]);
  });

  it('the account stays locked (copying off) until POST /v1/accounts/{id}/resume', async () => {
    const locked = (await svc.call('GET', `/v1/accounts/${slave.id}`, { token: key })).body;
    expect(locked).toMatchObject({ status: 'locked', statusReason: expect.stringContaining('panic-close') });
    const resumed = await svc.call('POST', `/v1/accounts/${slave.id}/resume`, { token: key });
    expect(resumed.body.status).toBe('connected');
  });

  it('without Prefer a fast job answers 200 with the final report and its job id', async () => {
    openPositions(1);
    const r = await svc.call('POST', `/v1/accounts/${slave.id}/panic-close`, { token: key, body: { cancelPendingOrders: false } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ accountId: slave.id, state: 'flat', closed: 1, remaining: 0, jobId: expect.stringMatching(/^job_/) });
    expect((await svc.call('GET', `/v1/panic-close-jobs/${r.body.jobId}`, { token: key })).body).toMatchObject({ state: 'succeeded', cancelPending: false });
    await svc.call('POST', `/v1/accounts/${slave.id}/resume`, { token: key });
  });

  it('an unknown job id is 404; the job route is in the OpenAPI document', async () => {
    const r = await svc.call('GET', '/v1/panic-close-jobs/job_unknown', { token: key });
    expect(r.status).toBe(404);
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/panic-close-jobs/{job_id}'].get).toMatchObject({ operationId: 'getPanicCloseJob', 'x-open-point': true });
  });
});
