import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { Receiver } from './receiver.js';

/** The webhook and event routes over HTTP, on the whole service (demo mode: private targets allowed). */
describe('webhook and event routes', () => {
  let svc: TestService;
  let rx: Receiver;
  let key: string;
  let userId: string;
  let otherKey: string;
  let token: string;

  beforeAll(async () => {
    svc = await startTestService({ env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
    rx = await new Receiver().up();
    const u = await svc.deps.auth.createUser('hooks@example.test', 'correct horse battery');
    userId = u.id;
    key = (await svc.deps.auth.createApiKey(u.id, 'hooks')).apiKey;
    token = (await svc.deps.auth.issueToken(u.id)).accessToken;
    const o = await svc.deps.auth.createUser('other@example.test', 'correct horse battery');
    otherKey = (await svc.deps.auth.createApiKey(o.id, 'other')).apiKey;
  }, 60_000);
  afterAll(async () => {
    await svc?.close();
    await rx?.down();
  });

  it('refuses every route without a valid API key', async () => {
    for (const [m, p] of [
      ['GET', '/v1/webhook-endpoints'],
      ['POST', '/v1/webhook-endpoints'],
      ['GET', '/v1/events'],
      ['GET', '/v1/events/stream'],
      ['GET', '/v1/event-types'],
    ] as const) {
      const r = await svc.call(m, p, m === 'POST' ? { body: { url: rx.url } } : {});
      expect(r.status, `${m} ${p}`).toBe(401);
      expect(
        (await svc.call(m, p, { token: 'ctk_nonsense', ...(m === 'POST' ? { body: { url: rx.url } } : {}) })).status,
      ).toBe(401);
    }
    // The dashboard's access token is not an API key.
    expect((await svc.call('GET', '/v1/webhook-endpoints', { token })).status).toBe(401);
  });

  it('creates an endpoint showing its secret once; lists and reads never show it', async () => {
    const c = await svc.call('POST', '/v1/webhook-endpoints', {
      token: key,
      body: { url: rx.url, description: 'ci', eventTypes: ['copy.confirmed'] },
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({
      id: expect.stringMatching(/^whe_/),
      url: rx.url,
      description: 'ci',
      eventTypes: ['copy.confirmed'],
      enabled: true,
      secret: expect.stringMatching(/^whsec_/),
    });
    const secret = c.body.secret as string;
    const list = await svc.call('GET', '/v1/webhook-endpoints', { token: key });
    expect(list.status).toBe(200);
    expect(list.body.endpoints.map((e: { id: string }) => e.id)).toContain(c.body.id);
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain('"secret"');
    const one = await svc.call('GET', `/v1/webhook-endpoints/${c.body.id}`, { token: key });
    expect(one.status).toBe(200);
    expect(one.text).not.toContain(secret);
    // Nor does the mirror the dashboard uses, nor the log.
    const mirror = await svc.call('GET', '/app/v1/webhook-endpoints', { token });
    expect(mirror.status).toBe(200);
    expect(mirror.text).not.toContain(secret);
    expect(svc.logs.join('')).not.toContain(secret);
    // Request records keep write responses for reconciliation, but not one carrying a secret shown once.
    await svc.store.requests.flush();
    const records = await svc.store.requests.list(userId, { limit: 100 });
    expect(records.some((r) => r.path === '/v1/webhook-endpoints')).toBe(true);
    expect(JSON.stringify(records)).not.toContain(secret);
  });

  it('refuses a bad URL and unknown event types with 400', async () => {
    for (const body of [
      { url: 'ftp://example.test/x' },
      { url: 'not a url' },
      { url: rx.url, eventTypes: ['no.such_type'] },
      { url: rx.url, extra: 1 },
      {},
    ]) {
      const r = await svc.call('POST', '/v1/webhook-endpoints', { token: key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ code: 'invalid_request', requestId: expect.any(String) });
    }
  });

  it('rotates the secret: both sign during the overlap; sends a test event and records the attempt', async () => {
    const c = await svc.call('POST', '/v1/webhook-endpoints', { token: key, body: { url: rx.url } });
    const id = c.body.id as string;
    const rot = await svc.call('POST', `/v1/webhook-endpoints/${id}/rotate-secret`, { token: key });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(c.body.secret);
    expect(Date.parse(rot.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    rx.secrets = [c.body.secret, rot.body.secret];
    const before = rx.all.length;
    const t = await svc.call('POST', `/v1/webhook-endpoints/${id}/test`, { token: key });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ ok: true, status: 200, trigger: 'manual', attempt: 0, endpointId: id });
    const got = rx.all.slice(before).find((x) => x.type === 'webhook.test')!;
    expect(got.type).toBe('webhook.test');
    expect(got.verifiedBy).toEqual([0, 1]);
    expect(JSON.parse(got.body).data).toMatchObject({ endpointId: id });

    const rot2 = await svc.call('POST', `/v1/webhook-endpoints/${id}/rotate-secret`, {
      token: key,
      body: { overlapSeconds: 0 },
    });
    expect(rot2.body.previousSecretExpiresAt).toBeNull();
    rx.secrets = [c.body.secret, rot.body.secret, rot2.body.secret];
    await svc.call('POST', `/v1/webhook-endpoints/${id}/test`, { token: key });
    expect(rx.all.filter((x) => x.type === 'webhook.test').at(-1)!.verifiedBy).toEqual([2]);

    await svc.store.requests.flush();
    const records = JSON.stringify(await svc.store.requests.list(userId, { limit: 100 }));
    expect(records).toContain('rotate-secret');
    for (const sec of [c.body.secret, rot.body.secret, rot2.body.secret]) expect(records).not.toContain(sec);

    const attempts = await svc.call('GET', `/v1/webhook-endpoints/${id}/attempts?limit=10`, { token: key });
    expect(attempts.status).toBe(200);
    expect(attempts.body.attempts).toHaveLength(2);
    expect(attempts.body.attempts[0]).toMatchObject({ ok: true, status: 200, responseSnippet: 'ok' });
  });

  it('lists events after a cursor in pages, and redelivers one to one endpoint with its original id', async () => {
    // A receiver of its own: the other tests' endpoints deliver to `rx` in the background.
    const own = await new Receiver().up();
    const c = await svc.call('POST', '/v1/webhook-endpoints', {
      token: key,
      body: { url: own.url, eventTypes: ['risk.triggered'] },
    });
    for (let i = 0; i < 5; i++)
      await svc.store.events.emit([{ userId, accountId: 'acc_x', type: 'position.modified', payload: { i } }]);
    const p1 = await svc.call('GET', '/v1/events?limit=3', { token: key });
    expect(p1.status).toBe(200);
    const all: Array<{ id: string; cursor: string; sequence: number; timestamp: string }> = [...p1.body.events];
    let next = p1.body.nextCursor;
    let more = p1.body.hasMore;
    while (more) {
      const p = await svc.call('GET', `/v1/events?limit=3&cursor=${next}`, { token: key });
      all.push(...p.body.events);
      next = p.body.nextCursor;
      more = p.body.hasMore;
    }
    const mine = all.filter((e) => (e as unknown as { accountId: string }).accountId === 'acc_x');
    expect(mine.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    // Cursors are opaque (issue 46): the order is the outbox's, oldest first.
    expect(all.map((e) => e.timestamp)).toEqual([...all.map((e) => e.timestamp)].sort());
    expect(new Set(all.map((e) => e.cursor)).size).toBe(all.length);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    // The other user sees none of them.
    const theirs = await svc.call('GET', '/v1/events', { token: otherKey });
    expect(theirs.body.events.map((e: { id: string }) => e.id)).not.toContain(mine[0]!.id);

    const r = await svc.call('POST', `/v1/webhook-endpoints/${c.body.id}/redeliver`, {
      token: key,
      body: { eventId: mine[2]!.id },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, eventId: mine[2]!.id, trigger: 'manual' });
    expect(own.all.map((x) => x.id)).toEqual([mine[2]!.id]);
    expect(
      (
        await svc.call('POST', `/v1/webhook-endpoints/${c.body.id}/redeliver`, {
          token: key,
          body: { eventId: 'evt_unknown' },
        })
      ).status,
    ).toBe(404);
    // Another user's event id through my endpoint: the same 404.
    await svc.store.events.emit([
      {
        userId: (await svc.deps.auth.authenticateApiKey(otherKey))!.userId,
        accountId: null,
        type: 'risk.triggered',
        payload: { rule: 'x' },
      },
    ]);
    const foreignEvent = (await svc.call('GET', '/v1/events', { token: otherKey })).body.events.at(-1).id;
    const fr = await svc.call('POST', `/v1/webhook-endpoints/${c.body.id}/redeliver`, {
      token: key,
      body: { eventId: foreignEvent },
    });
    expect(fr.status).toBe(404);
    await own.down();
  });

  it("gives another user's endpoint id the same 404 as an unknown id, on every route", async () => {
    const c = await svc.call('POST', '/v1/webhook-endpoints', { token: key, body: { url: rx.url } });
    const id = c.body.id as string;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', ''],
      ['PATCH', '', { enabled: false }],
      ['DELETE', ''],
      ['POST', '/rotate-secret', {}],
      ['POST', '/test'],
      ['GET', '/attempts'],
      ['POST', '/redeliver', { eventId: 'evt_x' }],
    ];
    for (const [m, suffix, body] of calls) {
      const foreign = await svc.call(m, `/v1/webhook-endpoints/${id}${suffix}`, {
        token: otherKey,
        ...(body !== undefined ? { body } : {}),
      });
      const unknown = await svc.call(m, `/v1/webhook-endpoints/whe_doesnotexist${suffix}`, {
        token: otherKey,
        ...(body !== undefined ? { body } : {}),
      });
      expect(foreign.status, `${m} ${suffix}`).toBe(404);
      expect(unknown.status).toBe(404);
      expect({ ...foreign.body, requestId: 'x' }).toEqual({ ...unknown.body, requestId: 'x' });
    }
    expect((await svc.call('GET', `/v1/webhook-endpoints/${id}`, { token: key })).body.enabled).toBe(true);
  });

  it('updates and deletes an endpoint', async () => {
    const c = await svc.call('POST', '/v1/webhook-endpoints', { token: key, body: { url: rx.url } });
    const id = c.body.id as string;
    const u = await svc.call('PATCH', `/v1/webhook-endpoints/${id}`, {
      token: key,
      body: { enabled: false, description: 'paused', eventTypes: ['order.accepted'] },
    });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by the user',
      description: 'paused',
      eventTypes: ['order.accepted'],
    });
    const back = await svc.call('PATCH', `/v1/webhook-endpoints/${id}`, { token: key, body: { enabled: true } });
    expect(back.body).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    expect((await svc.call('DELETE', `/v1/webhook-endpoints/${id}`, { token: key })).status).toBe(204);
    expect((await svc.call('GET', `/v1/webhook-endpoints/${id}`, { token: key })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/webhook-endpoints/${id}`, { token: key })).status).toBe(404);
  });

  it('publishes the catalogue and marks every route as an open point in the OpenAPI document', async () => {
    const types = await svc.call('GET', '/v1/event-types', { token: key });
    expect(types.status).toBe(200);
    expect(types.body.eventTypes.map((t: { type: string }) => t.type)).toEqual([
      'order.accepted',
      'order.rejected',
      'order.unresolved',
      'copy.confirmed',
      'copy.rejected',
      'copy.unresolved',
      'copy.skipped',
      'copy.denied',
      'position.opened',
      'position.modified',
      'position.closed',
      'account.health_changed',
      'account.status_changed',
      'risk.triggered',
      'panic_close.started',
      'panic_close.progress',
      'panic_close.finished',
      'reconcile.drift_found',
      'reconcile.healed',
      'webhook_endpoint.disabled',
      'webhook.test',
      'copy.loop_ignored',
      'account.circuit_breaker_tripped',
      'user.sign_in_failed',
      'user.password_changed',
      'slo.breached',
      'slo.recovered',
    ]);
    expect(types.body.eventTypes[0].schema.properties.data.properties.tradeId).toBeDefined();
    const doc = (await svc.call('GET', '/openapi.json')).body;
    const ops = new Map<string, Record<string, unknown>>();
    for (const item of Object.values(doc.paths) as Array<Record<string, Record<string, unknown>>>)
      for (const op of Object.values(item)) if (op.operationId) ops.set(op.operationId as string, op);
    for (const id of [
      'createWebhookEndpoint',
      'listWebhookEndpoints',
      'updateWebhookEndpoint',
      'rotateWebhookEndpointSecret',
      'deleteWebhookEndpoint',
      'sendWebhookTestEvent',
      'listWebhookAttempts',
      'listEvents',
      'redeliverEvent',
      'streamEvents',
      'listEventTypes',
    ]) {
      expect(ops.get(id), id).toBeDefined();
      expect(ops.get(id)!['x-open-point'], id).toBe(true);
    }
    expect(JSON.stringify(doc.components.schemas)).toContain('Event.order.accepted');
  });
});
