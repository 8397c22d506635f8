import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let masterId: string;
let slaveIds: string[];
const METRICS_TOKEN = 'scrape-secret-for-tests';

beforeAll(async () => {
  // The public listener serves /metrics only behind a metrics token (issue 46, finding 7).
  svc = await startTestService({
    env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', COPYTRADE_METRICS_TOKEN: METRICS_TOKEN },
  });
  key = svc.demo!.apiKey;
  const { body } = await svc.call('GET', '/v1/accounts', { token: key });
  const master = body.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  slaveIds = body.accounts.filter((a: any) => a.role === 'slave' && a.groupId === master.groupId).map((a: any) => a.id);
});
afterAll(async () => svc?.close());

const scrape = async () => {
  const r = await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text();
};

/** The value of one sample line, e.g. `copytrade_copy_outcomes_total{outcome="confirmed",platform="sim"}`. */
const sample = (text: string, name: string, labels: Record<string, string> = {}): number | null => {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return null;
};

const sum = (text: string, name: string, labels: Record<string, string> = {}) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
    .reduce((s, l) => s + Number(l.split(' ').pop()), 0);

async function copyOrder(): Promise<string> {
  const r = await svc.call('POST', `/v1/accounts/${masterId}/orders`, {
    token: key,
    body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
  });
  expect(r.status).toBe(202);
  await expect
    .poll(
      async () =>
        (await svc.call('GET', `/v1/trades/${r.body.tradeId}`, { token: key })).body.copies.every(
          (c: any) => c.outcome !== 'planned' && c.outcome !== 'sent',
        ),
      { timeout: 15_000 },
    )
    .toBe(true);
  return r.body.tradeId;
}

describe('GET /metrics (Prometheus text)', () => {
  it('after an order is copied: hop latencies, outcomes, queue depth, panic jobs, leases, webhooks, process metrics', async () => {
    // Every copy sent is counted once with its outcome (usually confirmed; on a loaded machine a write may outlast
    // the test service's 300 ms broker timeout and count as unresolved, settled later by lookup).
    const sent = (text: string) =>
      ['confirmed', 'rejected', 'denied', 'unresolved'].reduce(
        (n, outcome) => n + sum(text, 'copytrade_copy_outcomes_total', { outcome }),
        0,
      );
    const before = sent(await scrape());
    const tradeId = await copyOrder();
    // The last outcome batch is counted once written: wait for the counter rather than for a clock.
    await expect.poll(async () => sent(await scrape()), { timeout: 15_000 }).toBe(before + slaveIds.length);
    const text = await scrape();
    for (const hop of ['plan', 'record', 'send', 'ack'])
      expect(sum(text, 'copytrade_copy_hop_seconds_count', { hop })).toBeGreaterThanOrEqual(slaveIds.length);
    expect(
      sample(text, 'copytrade_copy_hop_seconds_bucket', { hop: 'ack', platform: 'sim', le: '+Inf' }),
    ).toBeGreaterThan(0);
    // The demo group has Slaves on each platform: each has its own series.
    for (const platform of ['sim', 'platformb', 'platformc', 'platforma'])
      expect(sum(text, 'copytrade_copy_outcomes_total', { platform })).toBeGreaterThan(0);
    expect(sum(text, 'copytrade_copy_outcomes_total', { outcome: 'confirmed' })).toBeGreaterThan(0);
    expect(sample(text, 'copytrade_copy_queue_depth')).toBe(0);
    expect(sample(text, 'copytrade_panic_close_jobs_running')).toBe(0);
    expect(sample(text, 'copytrade_leases_held')).toBe(0);
    for (const name of [
      'copytrade_copy_skips_total',
      'copytrade_broker_rate_limited_total',
      'copytrade_copy_retries_total',
      'copytrade_webhook_attempts_total',
    ])
      expect(text).toContain(`# TYPE ${name} counter`);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    // Labels are platforms, hops, outcomes and reason codes: no user, account or trade id leaks to a scraper.
    for (const id of [tradeId, masterId, ...slaveIds, svc.demo!.email]) expect(text).not.toContain(id);
    expect(text).not.toMatch(/(usr|acc|trd|int)_[A-Za-z0-9]/);
  });

  it('a Slave skipped for its state is counted by reason code, without the free-text detail', async () => {
    const paused = slaveIds[0]!;
    expect((await svc.call('POST', `/v1/accounts/${paused}/pause`, { token: key })).status).toBe(200);
    try {
      const before = sum(await scrape(), 'copytrade_copy_skips_total');
      await copyOrder();
      const text = await scrape();
      expect(sum(text, 'copytrade_copy_skips_total')).toBe(before + 1);
      const line = text.split('\n').find((l) => l.startsWith('copytrade_copy_skips_total{'))!;
      expect(line).toMatch(/reason="[a-z_]+"/);
      expect(sum(text, 'copytrade_copy_outcomes_total', { outcome: 'skipped' })).toBeGreaterThanOrEqual(1);
    } finally {
      await svc.call('POST', `/v1/accounts/${paused}/resume`, { token: key });
    }
  });

  it("a broker's rate-limit refusal is counted, and so is the resend after its hint", async () => {
    const slave = (await Promise.all(slaveIds.map((id) => svc.deps.store.accounts.byId(id)))).find(
      (a) => a!.platform === 'sim',
    )!;
    const before = await scrape();
    svc.broker.faults.inject({
      op: 'placeOrder',
      kind: 'rate_limit',
      retryAfterSec: 0,
      accountId: slave.brokerAccountId,
    });
    await copyOrder();
    const text = await scrape();
    expect(sum(text, 'copytrade_broker_rate_limited_total', { platform: 'sim' })).toBe(
      sum(before, 'copytrade_broker_rate_limited_total', { platform: 'sim' }) + 1,
    );
    expect(sum(text, 'copytrade_copy_retries_total', { reason: 'rate_limited', platform: 'sim' })).toBe(
      sum(before, 'copytrade_copy_retries_total', { reason: 'rate_limited', platform: 'sim' }) + 1,
    );
  });

  it('webhook deliveries are counted by result', async () => {
    let status = 200;
    const rx = createServer((_req, res) => {
      res.statusCode = status;
      res.end('ok');
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
      const ep = await svc.call('POST', '/v1/webhook-endpoints', {
        token: key,
        body: { url, eventTypes: ['order.accepted'] },
      });
      expect(ep.status).toBe(201);
      await copyOrder();
      await expect
        .poll(async () => sum(await scrape(), 'copytrade_webhook_attempts_total', { result: 'delivered' }), {
          timeout: 15_000,
        })
        .toBeGreaterThanOrEqual(1);
      status = 503;
      await copyOrder();
      await expect
        .poll(async () => sum(await scrape(), 'copytrade_webhook_attempts_total', { result: 'http_5xx' }), {
          timeout: 15_000,
        })
        .toBeGreaterThanOrEqual(1);
      await svc.call('DELETE', `/v1/webhook-endpoints/${ep.body.id}`, { token: key });
    } finally {
      await new Promise((r) => rx.close(r));
    }
  });

  it('a panic-close job running in this process shows on its gauge until it ends', async () => {
    const slave = (await Promise.all(slaveIds.map((id) => svc.deps.store.accounts.byId(id)))).find(
      (a) => a!.platform === 'sim',
    )!;
    // Its closes answer late (below the test service's broker timeout): the job runs long enough to be seen.
    const fault = svc.broker.faults.inject({
      op: 'closePosition',
      kind: 'delay',
      delayMs: 200,
      accountId: slave.brokerAccountId,
      times: 50,
    });
    try {
      const r = await svc.call('POST', `/v1/accounts/${slave.id}/panic-close`, {
        token: key,
        headers: { prefer: 'respond-async' },
      });
      expect(r.status).toBe(202);
      const gauge = async () => sample(await scrape(), 'copytrade_panic_close_jobs_running');
      // The job was started before the 202: if it still runs after this scrape, the scrape saw it (the delayed
      // closes make that the usual case; a job already over is not asserted on, so a slow scrape cannot flake).
      const job = async () => (await svc.call('GET', r.headers.get('location')!, { token: key })).body.state;
      const seen = await gauge();
      const state = await job();
      if (state === 'running') expect(seen).toBe(1);
      await expect.poll(job, { timeout: 15_000 }).not.toBe('running');
      await expect.poll(gauge, { timeout: 15_000 }).toBe(0);
    } finally {
      svc.broker.faults.remove(fault);
      await svc.call('POST', `/v1/accounts/${slave.id}/resume`, { token: key });
    }
  });

  it('the lease work hands the service a count its gauge reads at each scrape', async () => {
    let held = 3;
    svc.metrics.readFrom({ leasesHeld: () => held });
    expect(sample(await scrape(), 'copytrade_leases_held')).toBe(3);
    held = 0;
    expect(sample(await scrape(), 'copytrade_leases_held')).toBe(0);
  });
});

describe('GET /readyz', () => {
  it('200 with each check named while the store answers; /healthz keeps its answer', async () => {
    const r = await svc.call('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ready: true,
      checks: { started: { ok: true }, store: { ok: true } },
    });
    // No NATS_URL here: no bus to check.
    expect(r.body.checks.bus).toBeUndefined();
    const h = await svc.call('GET', '/healthz');
    expect(h.status).toBe(200);
    expect(h.body).toEqual({ ok: true });
  });

  it('a check registered by another part (the leases) counts; removing it takes it out', async () => {
    let held = false;
    const off = svc.readiness.register('leases', async () => {
      if (!held) throw new Error('no lease yet');
    });
    expect((await svc.call('GET', '/readyz')).status).toBe(503);
    held = true;
    expect((await svc.call('GET', '/readyz')).body.checks.leases).toMatchObject({ ok: true });
    off();
    expect((await svc.call('GET', '/readyz')).body.checks.leases).toBeUndefined();
  });

  // Last: it closes the store under the running service.
  it('503 naming the store once the store cannot answer; the body carries no driver message', async () => {
    await svc.store.close();
    const r = await svc.call('GET', '/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ ready: false, checks: { store: { ok: false, error: 'unavailable' } } });
    expect(Object.keys(r.body.checks.store).sort()).toEqual(['error', 'ms', 'ok']);
    expect(svc.logs.some((l) => l.includes('readiness check failing') && l.includes('"check":"store"'))).toBe(true);
  });
});
