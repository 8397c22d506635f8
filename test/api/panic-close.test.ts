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
  for (let i = 0; i < n; i++)
    svc.broker.placeOrder(slave.sim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: svc.broker.instrument('EURUSD')!.minVolume,
      tag: `pc-${Date.now()}-${i}`,
    });
};

describe('panic-close routes start a tracked job', () => {
  it('Prefer: respond-async answers 202 with the job and a Location; the job is readable until it ends flat', async () => {
    openPositions(2);
    svc.broker.faults.inject({ op: 'closePosition', kind: 'delay', delayMs: 150, accountId: slave.sim, times: 2 });
    const r = await svc.call('POST', `/v1/accounts/${slave.id}/panic-close`, {
      token: key,
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    expect(r.headers.get('location')).toBe(`/v1/panic-close-jobs/${r.body.id}`);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^job_/),
      scope: 'account',
      targetId: slave.id,
      state: 'running',
      progress: { accounts: [{ accountId: slave.id }] },
    });
    await expect
      .poll(async () => (await svc.call('GET', r.headers.get('location')!, { token: key })).body.state, {
        timeout: 10_000,
      })
      .toBe('succeeded');
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
    const r = await svc.call('POST', `/v1/accounts/${slave.id}/panic-close`, {
      token: key,
      body: { cancelPendingOrders: false },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      accountId: slave.id,
      state: 'flat',
      closed: 1,
      remaining: 0,
      jobId: expect.stringMatching(/^job_/),
    });
    expect((await svc.call('GET', `/v1/panic-close-jobs/${r.body.jobId}`, { token: key })).body).toMatchObject({
      state: 'succeeded',
      cancelPending: false,
    });
    await svc.call('POST', `/v1/accounts/${slave.id}/resume`, { token: key });
  });

  it('while a job runs, resume and orders to its account get 409 panic_close_running with the job id; a second start returns the running job', async () => {
    const { body } = await svc.call('GET', '/v1/accounts', { token: key });
    const master = body.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    const sim = (await svc.deps.store.accounts.byId(master.id))!.brokerAccountId;
    svc.broker.placeOrder(sim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: svc.broker.instrument('EURUSD')!.minVolume,
      tag: `pcm-${Date.now()}`,
    });
    const fault = svc.broker.faults.inject({ op: 'closePosition', kind: 'reject', accountId: sim, times: 1000 });
    try {
      const started = await svc.call('POST', `/v1/accounts/${master.id}/panic-close`, {
        token: key,
        headers: { prefer: 'respond-async' },
      });
      expect(started.status).toBe(202);
      const again = await svc.call('POST', `/v1/accounts/${master.id}/panic-close`, {
        token: key,
        headers: { prefer: 'respond-async' },
      });
      expect(again.body.id).toBe(started.body.id);
      const resume = await svc.call('POST', `/v1/accounts/${master.id}/resume`, { token: key });
      expect(resume.status).toBe(409);
      expect(resume.body).toMatchObject({ code: 'panic_close_running', jobId: started.body.id });
      expect((await svc.deps.store.accounts.byId(master.id))!.status).toBe('locked');
      const order = await svc.call('POST', `/v1/accounts/${master.id}/orders`, {
        token: key,
        body: { symbol: 'EURUSD', side: 'buy', volume: 0.01 },
      });
      expect(order.status).toBe(409);
      expect(order.body).toMatchObject({ code: 'panic_close_running', jobId: started.body.id });
    } finally {
      svc.broker.faults.remove(fault);
    }
    const jobs = await svc.deps.panic.jobs.runningOf((await svc.deps.store.accounts.byId(master.id))!.userId);
    for (const j of jobs) await svc.deps.panic.wait(j, 20_000);
    const resumed = await svc.call('POST', `/v1/accounts/${master.id}/resume`, { token: key });
    expect(resumed.status).toBe(200);
  }, 40_000);

  it('an unknown job id is 404; the job route is in the OpenAPI document', async () => {
    const r = await svc.call('GET', '/v1/panic-close-jobs/job_unknown', { token: key });
    expect(r.status).toBe(404);
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.paths['/v1/panic-close-jobs/{job_id}'].get).toMatchObject({
      operationId: 'getPanicCloseJob',
      'x-open-point': true,
    });
  });
});

/**
 * Issue 49, item 1: a group panic-close closes the Slaves' copies itself, then the Master's own close is seen and
 * followed. That follow-up must be recorded as a skip that says why, not as a wall of "rejected: position not
 * found" rows that count as problems and trip the rejected-copies alert.
 */
describe('a group panic-close leaves clean records', () => {
  it("the Master's close after the job is a skip `already_closed_by_panic` on every Slave, never a rejection", async () => {
    const { body: list } = await svc.call('GET', '/v1/accounts', { token: key });
    const master = list.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
    const masterId: string = master.id;
    const groupId: string = master.groupId;
    const slaveIds: string[] = list.accounts
      .filter((a: any) => a.role === 'slave' && a.groupId === groupId && a.status === 'connected')
      .map((a: any) => a.id);
    const trades = async () =>
      (await svc.call('GET', `/v1/trades?accountId=${masterId}&limit=50`, { token: key })).body.trades as any[];
    const open = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(open.status).toBe(202);
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/v1/trades/${open.body.tradeId}`, { token: key })).body.copies.map(
            (c: any) => c.outcome,
          ),
        { timeout: 20_000 },
      )
      .toEqual(slaveIds.map(() => 'confirmed'));

    const r = await svc.call('POST', `/v1/copier-groups/${groupId}/panic-close`, { token: key });
    expect([200, 202]).toContain(r.status);
    const jobId = r.status === 202 ? r.body.id : r.body.jobId;
    await expect
      .poll(async () => (await svc.call('GET', `/v1/panic-close-jobs/${jobId}`, { token: key })).body.state, {
        timeout: 30_000,
      })
      .toBe('succeeded');

    // The Master's close, made by the job, is followed like any Master action: one row per Slave.
    let close: any;
    await expect
      .poll(
        async () => {
          close = (await trades()).find((t) => t.action === 'close' && t.master.positionId);
          return close?.copies.length ?? 0;
        },
        { timeout: 20_000 },
      )
      .toBe(slaveIds.length);
    for (const c of close.copies) {
      expect(c.outcome).toBe('skipped');
      expect(c.skipReason).toMatch(/^already_closed_by_panic: /);
    }
    // And no row of any trade is a rejection the broker did not make.
    const rejected = (await trades()).flatMap((t) => t.copies).filter((c: any) => c.outcome === 'rejected');
    expect(rejected).toEqual([]);
  }, 90_000);
});
