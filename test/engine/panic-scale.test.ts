import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 10 §4 at scale, through the real cTrader wire: 1,200 positions on one platform C Slave behind the
 * simulator's 50 req/s per connection. The route must answer at once with the job, the job must end flat,
 * in about 1200/50 s plus a margin, with every rate-limit refusal retried after the broker's hint.
 */

const POSITIONS = 1200;
const RATE = 50;

let svc: TestService;
let key: string;
let groupId: string;
let slave: { id: string; sim: string };

beforeAll(async () => {
  svc = await startTestService();
  key = svc.demo!.apiKey;
  const { body } = await svc.call('GET', '/v1/accounts', { token: key });
  const c = body.accounts.find((a: any) => a.role === 'slave' && a.platform === 'platformc');
  groupId = c.groupId;
  const acc = (await svc.deps.store.accounts.byId(c.id))!;
  const simId =
    svc.broker.accounts().find((s) => s.meta.ctidUserId && s.login === acc.brokerAccountNumber)?.id ??
    svc.broker.accounts().filter((s) => s.meta.ctidUserId)[0]!.id;
  slave = { id: c.id, sim: simId };
  // Margin for 1,200 positions: a profitable trade first raises the demo balance (the simulator has no deposit).
  const mid = svc.broker.quote('EURUSD').bid;
  const big = svc.broker.placeOrder(slave.sim, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: dec('5'),
    tag: 'scale-funding',
  });
  svc.broker.setPrice('EURUSD', mid.plus('0.2'));
  svc.broker.closePosition(slave.sim, big.position!.id);
  svc.broker.setPrice('EURUSD', mid);
  const vol = svc.broker.instrument('EURUSD')!.minVolume;
  for (let i = 0; i < POSITIONS; i++)
    svc.broker.placeOrder(slave.sim, {
      symbol: 'EURUSD',
      side: i % 2 ? 'sell' : 'buy',
      type: 'market',
      volume: vol,
      tag: `scale-${i}`,
    });
}, 120_000);
afterAll(async () => svc?.close());

describe('group panic-close of 1,200 positions on one cTrader Slave limited to 50 req/s', () => {
  it('answers 202 with the job within 3 s, then ends flat in about 1200/50 s', async () => {
    expect(svc.broker.positions(slave.sim)).toHaveLength(POSITIONS);
    let lag = 0;
    let tick = performance.now();
    const lagTimer = setInterval(() => {
      const now = performance.now();
      lag = Math.max(lag, now - tick - 20);
      tick = now;
    }, 20);
    const t0 = performance.now();
    const r = await svc.call('POST', `/v1/copier-groups/${groupId}/panic-close`, { token: key });
    const answerMs = performance.now() - t0;
    clearInterval(lagTimer);
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ id: expect.stringMatching(/^job_/), state: 'running' });
    expect(answerMs).toBeLessThan(3000);

    const stored = (await svc.deps.panic.jobs.owned(
      (await svc.deps.store.accounts.byId(slave.id))!.userId,
      r.body.id,
    ))!;
    await svc.deps.panic.wait(stored, 90_000);
    const job = (await svc.call('GET', `/v1/panic-close-jobs/${r.body.id}`, { token: key })).body;
    const doneMs = performance.now() - t0;
    const resent = (job.progress.accounts as any[])
      .flatMap((a) => a.positions)
      .filter((p: any) => p.attempts > 1).length;
    console.log(
      `panic-close ${POSITIONS} positions: route answered in ${answerMs.toFixed(0)} ms (event loop lag up to ${lag.toFixed(0)} ms), job ${job.state} after ${(doneMs / 1000).toFixed(1)} s, ${resent} close(s) sent more than once`,
    );
    expect(job.error).toBeNull();
    expect(job.state).toBe('succeeded');
    expect(svc.broker.positions(slave.sim)).toEqual([]);
    const c = job.progress.accounts.find((a: any) => a.accountId === slave.id);
    expect(c).toMatchObject({ state: 'flat', remaining: 0, closed: POSITIONS });
    // The connection paces at 50 per 1.2 s (its window is longer than the broker's second on purpose): 28.8 s.
    expect(doneMs).toBeLessThan((POSITIONS / RATE) * 1200 + 10_000);
  }, 120_000);
});
