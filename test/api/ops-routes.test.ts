import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { opsRoutes } from '../../src/api/ops-routes.js';
import { startOpsListener } from '../../src/api/ops-server.js';
import { Readiness } from '../../src/metrics/readiness.js';
import { ServiceMetrics, webhookResult } from '../../src/metrics/service-metrics.js';
import { reasonCode } from '../../src/metrics/copy-metrics.js';

let app: FastifyInstance | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

async function serve(opts: { metricsToken?: string; readiness?: Readiness } = {}) {
  const metrics = new ServiceMetrics();
  app = Fastify() as unknown as FastifyInstance;
  await opsRoutes(app, { metrics, readiness: opts.readiness ?? new Readiness(), metricsToken: opts.metricsToken });
  return { app, metrics };
}

describe('operator routes', () => {
  it('on the public listener, /metrics without a configured token is not served; with one it asks for it', async () => {
    const app = Fastify();
    await opsRoutes(app, { metrics: new ServiceMetrics(), readiness: new Readiness(), publicListener: true });
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(404);
    const guarded = Fastify();
    await opsRoutes(guarded, {
      metrics: new ServiceMetrics(),
      readiness: new Readiness(),
      metricsToken: 'scrape-secret',
      publicListener: true,
    });
    expect((await guarded.inject({ url: '/metrics' })).statusCode).toBe(401);
    const ok = await guarded.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-secret' } });
    expect(ok.statusCode).toBe(200);
  });

  it('/metrics asks for the token when one is configured', async () => {
    const { app } = await serve({ metricsToken: 'scrape-secret' });
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
    const ok = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-secret' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE copytrade_copy_hop_seconds histogram');
  });

  it('/readyz: a check that does not answer in time is a timeout, one that throws is unavailable', async () => {
    const failures: string[] = [];
    const readiness = new Readiness({ timeoutMs: 50, onFailure: (name) => failures.push(name) });
    readiness.register('fine', async () => undefined);
    readiness.register('hung', () => new Promise(() => undefined));
    readiness.register('down', async () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:5432 postgres://user:secret@db');
    });
    const { app } = await serve({ readiness });
    for (let i = 0; i < 2; i++) {
      const r = await app.inject({ url: '/readyz' });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({
        ready: false,
        checks: {
          fine: { ok: true },
          hung: { ok: false, error: 'timeout' },
          down: { ok: false, error: 'unavailable' },
        },
      });
      // The driver's words (hosts, URLs) stay in the log, out of the public body.
      expect(r.body).not.toContain('secret');
      expect(r.body).not.toContain('10.1.2.3');
    }
    // Logged once per change to failing, not once per probe.
    expect(failures.sort()).toEqual(['down', 'hung']);
  });

  it('a process without route families (a worker) serves the probes and metrics on a listener of their own', async () => {
    const metrics = new ServiceMetrics();
    const readiness = new Readiness();
    let leases = false;
    readiness.register('leases', async () => {
      if (!leases) throw new Error('none yet');
    });
    const listener = await startOpsListener({ metrics, readiness }, { host: '127.0.0.1', port: 0, logger: false });
    try {
      expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${listener.url}/healthz`)).json()).toEqual({ ok: true });
      expect((await fetch(`${listener.url}/readyz`)).status).toBe(503);
      leases = true;
      metrics.readFrom({ leasesHeld: () => 2 });
      expect((await fetch(`${listener.url}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${listener.url}/metrics`)).text()).toContain('copytrade_leases_held 2');
      expect((await fetch(`${listener.url}/v1/accounts`)).status).toBe(404);
    } finally {
      await listener.close();
    }
  });

  it('labels stay bounded: reason codes and webhook results', () => {
    expect(reasonCode('slave_not_eligible: the Slave is paused (by user)')).toBe('slave_not_eligible');
    expect(reasonCode('risk_max_open_volume; the pending copy is cancelled')).toBe('risk_max_open_volume');
    expect(reasonCode('Something Free Text')).toBe('other');
    expect(reasonCode(null)).toBe('other');
    const base = { latencyMs: 1, snippet: null, retryAfterMs: null, aborted: false };
    expect(webhookResult({ ...base, ok: true, status: 200, error: null })).toBe('delivered');
    expect(webhookResult({ ...base, ok: false, status: 503, error: 'HTTP 503' })).toBe('http_5xx');
    expect(webhookResult({ ...base, ok: false, status: null, error: 'timed out after 5000 ms' })).toBe('timeout');
    expect(webhookResult({ ...base, ok: false, status: null, error: 'refused: 10.0.0.1 is a private address' })).toBe(
      'refused',
    );
    expect(webhookResult({ ...base, ok: false, status: null, error: 'ECONNRESET' })).toBe('network');
  });
});
