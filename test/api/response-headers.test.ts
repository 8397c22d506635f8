import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 46, finding 7: answers that may carry a secret are never cached, the HTML pages we serve carry a CSP,
 * the OAuth cookie is Secure when the browser came over https, and /metrics on the public listener is closed
 * unless a metrics token is configured.
 */

let svc: TestService;
let key: string;
let token: string;

beforeAll(async () => {
  // Loopback is the trusted proxy here, so a test can say "the client came over https" with X-Forwarded-Proto.
  svc = await startTestService({ env: { COPYTRADE_TRUST_PROXY: 'loopback' } });
  key = svc.demo!.apiKey;
  token = svc.demo!.accessToken;
});
afterAll(async () => svc?.close());

describe('Cache-Control: no-store on every /v1, /api and /app answer', () => {
  it('sign-in, a new API key, its rotation, reads, errors: all no-store', async () => {
    const signIn = await svc.call('POST', '/app/sign-in', {
      body: { email: svc.demo!.email, password: svc.demo!.password },
    });
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('cache-control')).toBe('no-store');

    const created = await svc.call('POST', '/app/api-keys', { token, body: { name: 'cache test' } });
    expect(created.status).toBeLessThan(300);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const id = created.body.id ?? created.body.keyId ?? created.body.key_id;
    const rotated = await svc.call('POST', `/app/api-keys/${id}/rotate`, { token, body: {} });
    expect(rotated.headers.get('cache-control')).toBe('no-store');

    for (const [path, t] of [
      ['/v1/accounts', key],
      ['/v1/me', key],
      ['/app/v1/accounts', token],
      ['/api/trading-accounts', token],
      ['/app/api-keys', token],
      ['/v1/accounts', undefined],
      ['/v1/nothing-here', key],
    ] as const) {
      const r = await svc.call('GET', path, t ? { token: t } : {});
      expect(r.headers.get('cache-control'), `${path} ${r.status}`).toBe('no-store');
    }
  });
});

describe('Content-Security-Policy on the pages we serve', () => {
  it('/docs: scripts and styles from this origin only, no framing by others, no upgrade of plain-http demos', async () => {
    const r = await fetch(`${svc.baseUrl}/docs/static/index.html`);
    expect(r.status).toBe(200);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    const first = await fetch(`${svc.baseUrl}/docs`, { redirect: 'manual' });
    expect(first.headers.get('content-security-policy') ?? '').toContain("default-src 'self'");
  });

  it('the OAuth callback page: nothing but its own script, by nonce', async () => {
    const r = await fetch(`${svc.baseUrl}/api/connect/platformc/callback?state=nope.nope&code=x`);
    const html = await r.text();
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=_-]+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(r.headers.get('cache-control')).toBe('no-store');
  });
});

describe('the OAuth cookie', () => {
  const start = (headers: Record<string, string> = {}) =>
    svc.call('POST', '/api/connect/platformc/start', { token, body: {}, headers });

  it('over plain http: no Secure (the browser would drop it)', async () => {
    const r = await start();
    expect(r.status).toBe(200);
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toContain('ct_oauth_c=');
    expect(cookie).not.toMatch(/;\s*Secure/i);
  });

  it('behind a trusted proxy that says https: Secure', async () => {
    const r = await start({ 'x-forwarded-proto': 'https' });
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie') ?? '').toMatch(/;\s*Secure/);
  });
});

describe('the OAuth cookie without a trusted proxy', () => {
  it('X-Forwarded-Proto from an untrusted peer does not make it Secure', async () => {
    const plain = await startTestService();
    try {
      const r = await plain.call('POST', '/api/connect/platformc/start', {
        token: plain.demo!.accessToken,
        body: {},
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('set-cookie') ?? '').not.toMatch(/;\s*Secure/i);
    } finally {
      await plain.close();
    }
  }, 60_000);
});

describe('/metrics on the public listener', () => {
  it('without COPYTRADE_METRICS_TOKEN it is not served there', async () => {
    const r = await fetch(`${svc.baseUrl}/metrics`);
    expect(r.status).toBe(404);
    expect(await r.text()).not.toContain('copytrade_');
  });
});
