import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 4: demo mode let webhook endpoints target private addresses, so the webhook test (which
 * answers the receiver's status and the start of its body) read loopback services. The demo now reaches only
 * its own receiver; private targets in general need the operator's explicit COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS.
 */
let svc: TestService;
let loopback: Server;
let loopbackUrl: string;

beforeAll(async () => {
  // A service on loopback that must stay out of reach: it answers a secret to anyone who asks.
  loopback = createServer((_req, res) => res.end('internal-secret-42'));
  await new Promise<void>((r) => loopback.listen(0, '127.0.0.1', () => r()));
  loopbackUrl = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/`;
  svc = await startTestService();
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await new Promise((r) => loopback?.close(r));
});

const create = (url: string) => svc.call('POST', '/v1/webhook-endpoints', { token: svc.demo!.apiKey, body: { url } });

describe('webhook targets in demo mode', () => {
  it('refuses loopback and private targets', async () => {
    for (const url of [loopbackUrl, 'http://[::1]:5432/', 'http://10.0.0.1/', 'http://[::ffff:127.0.0.1]:8080/']) {
      const r = await create(url);
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error).toMatch(/private/);
    }
    expect(svc.logs.join('')).not.toContain('internal-secret-42');
  });

  it("reaches the demo's own receiver, and the webhook test shows what it answered", async () => {
    const url = `${svc.baseUrl}/app/demo/webhook-receiver/mine`;
    const ep = await create(url);
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    const test = await svc.call('POST', `/v1/webhook-endpoints/${ep.body.id}/test`, { token: svc.demo!.apiKey });
    expect(test.status, JSON.stringify(test.body)).toBe(200);
    expect(test.body).toMatchObject({ ok: true, status: 200 });
    expect(test.body.responseSnippet).toContain('webhook.test');
    // Another path of the service itself is not a receiver.
    expect((await create(`${svc.baseUrl}/metrics`)).status).toBe(400);
    expect((await create(`${svc.baseUrl}/app/demo/webhook-receiver/../../metrics`)).status).toBe(400);
  });
});

describe('COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  let open: TestService;
  beforeAll(async () => {
    open = await startTestService({ env: { COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } });
  }, 60_000);
  afterAll(async () => open?.close());

  it("is the operator's explicit choice, in demo mode too", async () => {
    const r = await open.call('POST', '/v1/webhook-endpoints', {
      token: open.demo!.apiKey,
      body: { url: loopbackUrl },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  });
});
