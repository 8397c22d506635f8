import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Account } from '../../src/domain/account.js';
import { Decimal } from '../../src/domain/decimal.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { Receiver } from '../webhooks/receiver.js';

/**
 * Service levels through family V on the demo (docs/slo.md): a target set and read back, bad targets refused in
 * words, a foreign group or account the same 404 as an unknown one, and a refused copy on one Slave reaching a
 * webhook endpoint as slo.breached, raised by the service's own schedule, once.
 */
let svc: TestService;
let key: string;
let groupId: string;
let master: Account;
let slave: Account;
const rx = new Receiver();

beforeAll(async () => {
  await rx.up();
  svc = await startTestService({
    env: { COPYTRADE_SLO_EVALUATE_MS: '100', COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' },
  });
  key = svc.demo!.apiKey;
  const all = await svc.store.accounts.all();
  master = all.find((a) => a.platform === 'sim' && a.role === 'master' && a.name === 'Demo Master')!;
  groupId = master.groupId!;
  slave = all.find((a) => a.platform === 'sim' && a.role === 'slave' && a.groupId === groupId)!;
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await rx.down();
});

const call = (method: string, path: string, body?: unknown, token = key) =>
  svc.call(method, path, { token, ...(body !== undefined ? { body } : {}) });

describe('service levels (family V)', () => {
  it('sets a target and reads it back with the levels of every Slave', async () => {
    const put = await call('PUT', `/v1/copier-groups/${groupId}/slo`, { successPercent: 99, windowMinutes: 30 });
    expect(put.status).toBe(200);
    expect(put.body.target).toMatchObject({ successPercent: 99, latencyP99Ms: null, windowMinutes: 30, minCopies: 1 });
    const get = await call('GET', `/v1/copier-groups/${groupId}/slo`);
    expect(get.status).toBe(200);
    expect(get.body.target).toEqual(put.body.target);
    expect(get.body.slaves.map((s: { accountId: string }) => s.accountId)).toContain(slave.id);
    expect(get.body.breaches).toEqual([]);
  });

  it('refuses bad targets with a 400 that says what is wrong, and keeps the old one', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ latencyP99Ms: -5 }, /latencyP99Ms/],
      [{ latencyP99Ms: 0 }, /latencyP99Ms/],
      [{ successPercent: 101 }, /successPercent/],
      [{ successPercent: 'NaN' }, /successPercent/],
      [{ maxDriftGrade: 'small' }, /maxDriftGrade/],
      [{ windowMinutes: 0 }, /windowMinutes/],
      [{ latencyP50Ms: 3000, latencyP99Ms: 2000 }, /latencyP50Ms/],
      [{ surprise: 1 }, /surprise|additional/],
    ];
    for (const [body, msg] of bad) {
      const r = await call('PUT', `/v1/copier-groups/${groupId}/slo`, body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
      expect(JSON.stringify(r.body), JSON.stringify(body)).toMatch(msg);
    }
    const nan = await svc.call('PUT', `/v1/copier-groups/${groupId}/slo`, {
      token: key,
      rawBody: '{"successPercent": NaN}',
    });
    expect(nan.status).toBe(400);
    expect((await call('GET', `/v1/copier-groups/${groupId}/slo`)).body.target.successPercent).toBe(99);
  });

  it("another user's group or account is the same 404 as an unknown one", async () => {
    const other = await svc.deps.auth.createUser('slo-other@example.test', 'password-123');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'k');
    const month = new Date().toISOString().slice(0, 7);
    for (const [method, path, body] of [
      ['GET', `/v1/copier-groups/${groupId}/slo`, undefined],
      ['PUT', `/v1/copier-groups/${groupId}/slo`, { successPercent: 1 }],
      ['GET', `/v1/accounts/${slave.id}/slo-report?month=${month}`, undefined],
    ] as const) {
      const foreign = await call(method, path, body, apiKey);
      const unknown = await call(method, path.replace(groupId, 'grp_nope').replace(slave.id, 'acc_nope'), body, apiKey);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
      expect([unknown.status, unknown.body.code, unknown.body.error]).toEqual([404, 'not_found', foreign.body.error]);
    }
    expect((await call('GET', `/v1/copier-groups/${groupId}/slo`)).body.target.successPercent).toBe(99);
  });

  it('a refused copy on one Slave reaches a webhook as slo.breached, once, and shows in the monthly report', async () => {
    const ep = await call('POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['slo.breached'] });
    expect(ep.status).toBe(201);
    rx.secrets = [ep.body.secret];
    svc.broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: slave.brokerAccountId, times: 1 });
    svc.broker.placeOrder(master.brokerAccountId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: new Decimal('0.1'),
      tag: 'slo-api',
    });
    await vi.waitFor(
      () => {
        const got = rx.accepted.filter((d) => d.type === 'slo.breached' && d.accountId === slave.id);
        expect(got).toHaveLength(1);
        expect(got[0]!.verifiedBy).toEqual([0]);
        expect(JSON.parse(got[0]!.body).data).toMatchObject({ groupId, metric: 'success', target: 99 });
      },
      { timeout: 30_000, interval: 100 },
    );
    const breaches = (await call('GET', `/v1/copier-groups/${groupId}/slo`)).body.breaches;
    expect(breaches.filter((b: { accountId: string }) => b.accountId === slave.id)).toMatchObject([
      { metric: 'success', target: 99 },
    ]);
    const month = new Date().toISOString().slice(0, 7);
    const report = await call('GET', `/v1/accounts/${slave.id}/slo-report?month=${month}`);
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ accountId: slave.id, groupId, month, met: false, missed: ['success'] });
    expect(report.body.levels.success).toMatchObject({ attempted: 1, filled: 0, failed: 1 });
    expect(report.body.days).toHaveLength(1);
    // The breach lasted through the rounds the calls above took (the schedule runs every 100 ms): still one.
    expect(rx.accepted.filter((d) => d.type === 'slo.breached' && d.accountId === slave.id)).toHaveLength(1);
  }, 60_000);

  it('the report refuses a malformed or future month and a Master account', async () => {
    expect((await call('GET', `/v1/accounts/${slave.id}/slo-report?month=2026-13`)).status).toBe(400);
    expect((await call('GET', `/v1/accounts/${slave.id}/slo-report?month=2026-1`)).status).toBe(400);
    expect((await call('GET', `/v1/accounts/${slave.id}/slo-report?month=2999-01`)).body.error).toMatch(/not started/);
    expect((await call('GET', `/v1/accounts/${master.id}/slo-report?month=2026-01`)).body.error).toMatch(/Slave/);
  });
});
