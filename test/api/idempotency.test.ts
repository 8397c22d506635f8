import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let key: string;
let masterId: string;
let masterSim: string;

beforeAll(async () => {
  svc = await startTestService({ env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
  key = svc.demo!.apiKey;
  const { body } = await svc.call('GET', '/v1/accounts', { token: key });
  const master = body.accounts.find((a: any) => a.role === 'master' && a.platform === 'sim');
  masterId = master.id;
  masterSim = (await svc.deps.store.accounts.byId(masterId))!.brokerAccountId;
});
afterAll(async () => svc?.close());

let n = 0;
const freshKey = () => `test-key-${Date.now()}-${++n}`;
const order = (
  idem: string,
  body: Record<string, unknown> = { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
  token = key,
) => svc.call('POST', `/v1/accounts/${masterId}/orders`, { token, body, headers: { 'idempotency-key': idem } });
const masterPositions = () => svc.broker.positions(masterSim).length;

describe('Idempotency-Key on family V writes', () => {
  it('never stores a secret shown once: a replayed webhook-endpoint creation says so instead of repeating it', async () => {
    const k = freshKey();
    const body = { url: 'http://127.0.0.1:9/hook' };
    const first = await svc.call('POST', '/v1/webhook-endpoints', {
      token: key,
      body,
      headers: { 'idempotency-key': k },
    });
    expect(
      first.status,
      first.text +
        svc.logs
          .filter((l) => l.includes('"level":50'))
          .join('')
          .slice(0, 1500),
    ).toBe(201);
    expect(first.text).toContain('whsec_');
    const replay = await svc.call('POST', '/v1/webhook-endpoints', {
      token: key,
      body,
      headers: { 'idempotency-key': k },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.code).toBe('secret_shown_once');
    const stored = JSON.stringify(
      (
        (await svc.store.database.db.execute(sql`select response from idempotency_keys`)) as unknown as {
          rows: unknown[];
        }
      ).rows,
    );
    expect(stored).not.toContain('whsec_');
  });

  it('same key and same body: the stored answer, marked as a replay, and one order at the broker', async () => {
    const k = freshKey();
    const before = masterPositions();
    const first = await order(k);
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same JSON with the keys in another order is the same body.
    const again = await order(k, { volume: 0.1, side: 'buy', symbol: 'EURUSD' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(masterPositions()).toBe(before + 1);
  });

  it('same key with another body (or another path) is 422 idempotency_key_reused', async () => {
    const k = freshKey();
    expect((await order(k)).status).toBe(202);
    const other = await order(k, { symbol: 'EURUSD', side: 'sell', volume: 0.1 });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused', requestId: expect.any(String) });
    const elsewhere = await svc.call('POST', `/v1/accounts/${masterId}/pause`, {
      token: key,
      headers: { 'idempotency-key': k },
    });
    expect(elsewhere.status).toBe(422);
  });

  it('while the first request still runs, the same key is 409 idempotency_key_in_flight', async () => {
    const k = freshKey();
    const delay = svc.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 2_000, accountId: masterSim });
    const slow = order(k);
    // The delay is spent once the first request's order is at the broker: its key is taken by then. 2 s of it
    // leave a loaded machine the time to send the second request while the first still waits.
    await expect.poll(() => svc.broker.faults.list().some((f) => f.id === delay), { timeout: 15_000 }).toBe(false);
    const during = await order(k);
    expect(during.status).toBe(409);
    expect(during.body.code).toBe('idempotency_key_in_flight');
    const first = await slow;
    expect(first.status).toBe(202);
    const after = await order(k);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body.tradeId).toBe(first.body.tradeId);
  });

  it('two simultaneous requests with one key: one runs, the other is a 409 or a replay; exactly one order at the broker', async () => {
    for (let round = 0; round < 3; round++) {
      const k = freshKey();
      const before = masterPositions();
      const [a, b] = await Promise.all([order(k), order(k)]);
      const statuses = [a.status, b.status].sort();
      expect([
        [202, 202],
        [202, 409],
      ]).toContainEqual(statuses);
      if (statuses[1] === 202) expect(a.body.tradeId).toBe(b.body.tradeId);
      expect(masterPositions()).toBe(before + 1);
    }
  });

  it('a key longer than 255 characters is 400; 255 is fine', async () => {
    const long = await order('k'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('invalid_request');
    expect((await order('k'.repeat(250) + String(Date.now()).slice(-5))).status).toBe(202);
  });

  it('a request refused before its handler ran is not stored: the corrected request may reuse the key', async () => {
    const k = freshKey();
    const bad = await order(k, { symbol: 'EURUSD', side: 'sideways', volume: 0.1 });
    expect(bad.status).toBe(400);
    const good = await order(k);
    expect(good.status).toBe(202);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a 503 with Retry-After (nothing was sent: a lease moving) is not stored: the retry with the same key runs', async () => {
    const k = freshKey();
    const orders = svc.deps.orders;
    const send = orders.send;
    let refused = 0;
    orders.send = async (...args: Parameters<typeof send>) => {
      if (refused++ === 0)
        throw new AppError('upstream_unavailable', 'the lease ran out before the order could leave; nothing was sent', {
          retryable: true,
          retryAfter: 2,
        });
      return send.apply(orders, args);
    };
    try {
      const before = masterPositions();
      const first = await order(k);
      expect(first.status).toBe(503);
      expect(first.headers.get('retry-after')).toBe('2');
      const retry = await order(k);
      expect(retry.status, retry.text).toBe(202);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(masterPositions()).toBe(before + 1);
      const replay = await order(k);
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      orders.send = send;
    }
  });

  it('keys are scoped per user', async () => {
    const k = freshKey();
    expect((await order(k)).status).toBe(202);
    const other = await svc.deps.auth.createUser(`idem-${Date.now()}@example.test`, 'a long enough password 1');
    const { apiKey } = await svc.deps.auth.createApiKey(other.id, 'test');
    // Another user's same key is a new key: their request runs (and is refused on its own merits: not their account).
    const theirs = await order(k, { symbol: 'EURUSD', side: 'sell', volume: 0.1 }, apiKey);
    expect(theirs.status).toBe(404);
  });

  it('keys expire after 24 hours', async () => {
    const k = freshKey();
    expect((await order(k)).status).toBe(202);
    await svc.store.database.db.execute(
      sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = ${k}`,
    );
    const reused = await order(k, { symbol: 'EURUSD', side: 'sell', volume: 0.1 });
    expect(reused.status).toBe(202);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a panic-close replay repeats its answer without a second job', async () => {
    const k = freshKey();
    const first = await svc.call('POST', `/v1/accounts/${masterId}/panic-close`, {
      token: key,
      headers: { 'idempotency-key': k },
    });
    expect(first.status).toBe(200);
    const again = await svc.call('POST', `/v1/accounts/${masterId}/panic-close`, {
      token: key,
      headers: { 'idempotency-key': k },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.jobId).toBe(first.body.jobId);
    await svc.call('POST', `/v1/accounts/${masterId}/resume`, { token: key });
  });
});
