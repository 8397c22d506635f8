import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Store } from '../../src/store/store.js';
import { harness, type Harness } from './harness.js';
import { Receiver } from './receiver.js';

/** The endpoint's lane has caught up: its cursor is at the user's last event, so it has nothing left to send. */
const caughtUp = (h: Harness, endpointId: string) =>
  expect
    .poll(
      async () => {
        const [ep, last] = await Promise.all([h.hooks.repo.byId(endpointId), h.hooks.repo.latestCursor(h.userId)]);
        return ep?.deliveredCursor === last;
      },
      { timeout: 10_000, interval: 20 },
    )
    .toBe(true);

/** The deliverer against a real receiver on 127.0.0.1, on an in-memory store; every wait is bounded. */
describe('webhook delivery', () => {
  let h: Harness | null = null;
  let store: Store;
  beforeAll(async () => {
    store = await Store.open({ dataDir: ':memory:' });
  });
  afterAll(async () => {
    await store?.close();
  });
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await new Receiver().up();
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    await h?.close();
    h = null;
    for (const r of receivers.splice(0)) await r.down();
  });

  it('signs every delivery so the standardwebhooks package verifies it, with the documented headers and body', async () => {
    h = await harness({ store });
    const rx = await receiver();
    const { secret } = await h.hooks.service.create(h.userId, { url: rx.url });
    rx.secrets = [secret];
    await h.emit('acc_1', 'order.accepted', {
      tradeId: 'trd_1',
      symbol: 'EURUSD',
      side: 'buy',
      volume: '0.10',
      copiedTo: 2,
      positionId: 'p1',
      fillPrice: '1.1',
    });
    await rx.until(() => rx.accepted.length === 1);
    const got = rx.accepted[0]!;
    expect(got.verifiedBy).toEqual([0]);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(got.id);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const body = JSON.parse(got.body);
    expect(Object.keys(body).sort()).toEqual([
      'accountId',
      'data',
      'id',
      'schemaVersion',
      'sequence',
      'timestamp',
      'type',
    ]);
    expect(body).toMatchObject({
      type: 'order.accepted',
      accountId: 'acc_1',
      sequence: 1,
      schemaVersion: 1,
      data: { tradeId: 'trd_1', volume: '0.10' },
    });
    // The attempt row commits just after the receiver answered.
    const epId = (await h.hooks.service.list(h.userId))[0]!.id;
    const hooks = h.hooks;
    await expect
      .poll(async () => (await hooks.repo.attempts(epId, 10))[0], { timeout: 10_000, interval: 20 })
      .toMatchObject({ ok: true, status: 200, attempt: 1, responseSnippet: 'ok' });
  });

  it('during a secret rotation both the old and the new secret verify; after the overlap only the new one', async () => {
    h = await harness({ store });
    const rx = await receiver();
    const { endpoint, secret: oldSecret } = await h.hooks.service.create(h.userId, { url: rx.url });
    const { secret: newSecret } = await h.hooks.service.rotateSecret(h.userId, endpoint.id, 60);
    rx.secrets = [oldSecret, newSecret];
    await h.emit('acc_1', 'position.opened');
    await rx.until(() => rx.accepted.length === 1);
    expect(rx.accepted[0]!.verifiedBy).toEqual([0, 1]);
    expect(rx.accepted[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);

    const { secret: third } = await h.hooks.service.rotateSecret(h.userId, endpoint.id, 0);
    rx.secrets = [oldSecret, newSecret, third];
    await h.emit('acc_1', 'position.closed');
    await rx.until(() => rx.accepted.length === 2);
    expect(rx.accepted[1]!.verifiedBy).toEqual([2]);
  });

  it('a rotation that commits while the lane reads the feed signs that delivery with the new secret only', async () => {
    h = await harness({ store });
    const rx = await receiver();
    const { endpoint, secret: oldSecret } = await h.hooks.service.create(h.userId, { url: rx.url });
    // The lane's next read of the feed waits until the rotation below has committed.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered!: () => void;
    const reading = new Promise<void>((r) => {
      entered = r;
    });
    const feed = h.hooks.feed;
    const read = feed.read.bind(feed);
    const spy = vi.spyOn(feed, 'read').mockImplementationOnce(async (...args) => {
      entered();
      await gate;
      return read(...args);
    });
    try {
      await h.emit('acc_1', 'position.opened');
      await reading;
      const { secret: newSecret } = await h.hooks.service.rotateSecret(h.userId, endpoint.id, 0);
      rx.secrets = [oldSecret, newSecret];
      release();
      await rx.until(() => rx.accepted.length === 1);
      // Before, the endpoint read at the start of the pass signed it: the replaced secret only ([0]).
      expect(rx.accepted[0]!.verifiedBy).toEqual([1]);
    } finally {
      spy.mockRestore();
    }
  });

  it('delivers every event after the receiver was down, in order per account, none twice', async () => {
    h = await harness({ store, cfg: { retryScheduleMs: [0, 20, 40, 80], pollMs: 100 } });
    const rx = await receiver();
    const { secret } = await h.hooks.service.create(h.userId, { url: rx.url });
    rx.secrets = [secret];
    await rx.down();
    const accounts = ['acc_a', 'acc_b', 'acc_c'];
    for (let i = 0; i < 30; i++) await h.emit(accounts[i % 3]!, 'copy.confirmed', { i });
    // It failed for a while: attempts were recorded against the head event only (head-of-line).
    const hooks = h.hooks;
    const ep = (await hooks.service.list(h.userId))[0]!;
    await expect
      .poll(async () => (await hooks.repo.attempts(ep.id, 100)).length, { timeout: 15_000 })
      .toBeGreaterThan(1);
    const failures = await hooks.repo.attempts(ep.id, 100);
    expect(new Set(failures.map((a) => a.eventId)).size).toBe(1);
    expect(failures.every((a) => !a.ok && a.status === null && /ECONNREFUSED/.test(a.error ?? ''))).toBe(true);
    expect((await h.hooks.service.get(h.userId, ep.id)).failingSince).not.toBeNull();

    await rx.up();
    await rx.until(() => rx.accepted.length >= 30, 15_000, '30 deliveries');
    await caughtUp(h, ep.id);
    const ids = rx.accepted.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(30);
    for (const a of accounts) {
      expect(rx.accepted.filter((r) => r.accountId === a).map((r) => r.sequence)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
    }
    expect(rx.accepted.every((r) => r.verifiedBy.length === 1)).toBe(true);
    expect((await h.hooks.service.get(h.userId, ep.id)).failingSince).toBeNull();
  });

  it('disables the endpoint on 410 Gone and writes webhook_endpoint.disabled', async () => {
    h = await harness({ store });
    const rx = await receiver();
    const other = await receiver();
    rx.respond = () => ({ status: 410, body: 'gone' });
    const { endpoint } = await h.hooks.service.create(h.userId, { url: rx.url });
    const { secret } = await h.hooks.service.create(h.userId, {
      url: other.url,
      eventTypes: ['webhook_endpoint.disabled'],
    });
    other.secrets = [secret];
    await h.emit('acc_1', 'order.accepted');
    await other.until(() => other.accepted.length === 1, 10_000, 'the disabled event at the other endpoint');
    expect(rx.all).toHaveLength(1);
    const ep = await h.hooks.service.get(h.userId, endpoint.id);
    expect(ep.enabled).toBe(false);
    expect(ep.disabledReason).toMatch(/410/);
    const ev = JSON.parse(other.accepted[0]!.body);
    expect(ev).toMatchObject({
      type: 'webhook_endpoint.disabled',
      accountId: null,
      data: { endpointId: endpoint.id, url: rx.url },
    });
    // A witness subscribed to the same type receives the next event: the deliverer has handled it for every
    // endpoint of the user (one wake kicks them all), and the disabled one still got nothing more.
    const witness = await receiver();
    const { secret: witnessSecret } = await h.hooks.service.create(h.userId, {
      url: witness.url,
      eventTypes: ['order.accepted'],
    });
    witness.secrets = [witnessSecret];
    await h.emit('acc_1', 'order.accepted');
    await witness.until(() => witness.accepted.some((r) => r.sequence === 2), 10_000, 'the next order.accepted');
    expect(rx.all).toHaveLength(1);
  });

  it("honours the receiver's Retry-After", async () => {
    h = await harness({ store, cfg: { retryScheduleMs: [0, 10, 10, 10] } });
    const rx = await receiver();
    rx.respond = (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    await h.hooks.service.create(h.userId, { url: rx.url });
    await h.emit('acc_1', 'order.accepted');
    await rx.until(() => rx.accepted.length === 1, 10_000);
    expect(rx.all).toHaveLength(2);
    expect(rx.all[1]!.at - rx.all[0]!.at).toBeGreaterThanOrEqual(950);
    expect(rx.all[1]!.id).toBe(rx.all[0]!.id);
  });

  it('disables an endpoint that keeps failing past the failure window', async () => {
    h = await harness({ store, cfg: { retryScheduleMs: [0, 30], failureWindowMs: 300 } });
    const rx = await receiver();
    rx.respond = () => ({ status: 500, body: 'x'.repeat(5000) });
    const { endpoint } = await h.hooks.service.create(h.userId, { url: rx.url });
    await h.emit('acc_1', 'order.accepted');
    // Failing for the 300 ms window takes that long on the deliverer's own retry timers: a bounded wait for its end.
    const { service } = h.hooks;
    const userId = h.userId;
    await expect
      .poll(async () => (await service.get(userId, endpoint.id)).enabled, { timeout: 10_000, interval: 50 })
      .toBe(false);
    expect((await service.get(userId, endpoint.id)).disabledReason).toMatch(/no successful delivery since/);
    const attempts = await h.hooks.repo.attempts(endpoint.id, 100);
    expect(attempts.length).toBeGreaterThan(3);
    expect(attempts.every((a) => a.status === 500 && Buffer.byteLength(a.responseSnippet ?? '') <= 1024)).toBe(true);
    expect(attempts.map((a) => a.attempt).sort((a, b) => a - b)).toEqual(attempts.map((_, i) => i + 1));
    const disabled = (await h.store.events.after(h.userId, 0, 100)).filter(
      (e) => e.type === 'webhook_endpoint.disabled',
    );
    expect(disabled).toHaveLength(1);
  });

  it('delivers only the subscribed types, and still in order', async () => {
    h = await harness({ store });
    const rx = await receiver();
    await h.hooks.service.create(h.userId, { url: rx.url, eventTypes: ['copy.confirmed', 'copy.rejected'] });
    for (const t of [
      'order.accepted',
      'copy.confirmed',
      'position.opened',
      'copy.rejected',
      'order.accepted',
      'copy.confirmed',
    ])
      await h.emit('acc_1', t);
    await rx.until(() => rx.accepted.length === 3);
    const epId = (await h.hooks.service.list(h.userId))[0]!.id;
    await caughtUp(h, epId);
    expect(rx.accepted.map((r) => [r.type, r.sequence])).toEqual([
      ['copy.confirmed', 2],
      ['copy.rejected', 4],
      ['copy.confirmed', 6],
    ]);
  });

  it('refuses private targets when not allowed: at create, and again at delivery', async () => {
    h = await harness({ store, cfg: { allowPrivateTargets: false } });
    await expect(h.hooks.service.create(h.userId, { url: 'http://127.0.0.1:9/hook' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(h.hooks.service.create(h.userId, { url: 'http://localhost:9/hook' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(h.hooks.service.create(h.userId, { url: 'http://[::ffff:10.0.0.1]/hook' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    // An endpoint stored before the setting changed (or whose name now resolves privately) is refused at delivery.
    const rx = await receiver();
    const { endpoint } = await h.hooks.service.create(h.userId, { url: 'http://93.184.215.14:9/hook' });
    await h.hooks.repo.update(h.userId, endpoint.id, { url: rx.url });
    const attempt = await h.hooks.service.sendTest(h.userId, endpoint.id);
    expect(attempt).toMatchObject({ ok: false, status: null });
    expect(attempt.error).toMatch(/refused: .*private/);
    expect(rx.all).toHaveLength(0);
  });

  it('stops cleanly while a delivery is in flight, without counting it as a failure', async () => {
    h = await harness({ store });
    const rx = await receiver();
    await h.hooks.service.create(h.userId, { url: rx.url });
    // A receiver that never answers: stop() must not wait for the 2 s timeout.
    await rx.down();
    const { createServer } = await import('node:http');
    let hanging = 0;
    const hang = createServer(() => {
      hanging++;
    });
    await new Promise<void>((r) => hang.listen(rx.port, '127.0.0.1', () => r()));
    await h.emit('acc_1', 'order.accepted');
    // Stopped once the delivery is on the wire, so stop() has a request in flight to abort.
    await expect.poll(() => hanging, { timeout: 15_000 }).toBeGreaterThan(0);
    const t0 = Date.now();
    await h.hooks.stop();
    // Below the 2 s delivery timeout, with room for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(1500);
    const ep = (await h.hooks.service.list(h.userId))[0]!;
    expect(await h.hooks.repo.attempts(ep.id, 10)).toHaveLength(0);
    hang.closeAllConnections();
    await new Promise<void>((r) => hang.close(() => r()));
  });
});
