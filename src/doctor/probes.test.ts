import { createServer as createHttps } from 'node:https';
import { createServer as createNet, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_CERT_PEM, LOOPBACK_KEY_PEM } from '../simulator/ctrader/certs/loopback-test-cert.js';
import { probeHttp, probeSocket } from './probes.js';

const portOf = (s: { address(): AddressInfo | string | null }) => (s.address() as AddressInfo).port;
const listen = <T extends Server>(s: T) => new Promise<T>((r) => s.listen(0, '127.0.0.1', () => r(s)));

let silent: Server;
let held: Socket[] = [];
let closedPort: number;
let tlsServer: ReturnType<typeof createHttps>;

beforeAll(async () => {
  // Accepts and never answers: the probe's bound must end it.
  silent = await listen(createNet((s) => held.push(s)));
  const gone = await listen(createNet());
  closedPort = portOf(gone);
  await new Promise((r) => gone.close(r));
  tlsServer = await listen(
    createHttps({ cert: LOOPBACK_CERT_PEM, key: LOOPBACK_KEY_PEM }, (_req, res) => res.end('{}')) as never,
  );
});
afterAll(async () => {
  for (const s of held) s.destroy();
  held = [];
  await new Promise((r) => silent.close(r));
  await new Promise((r) => tlsServer.close(r));
});

describe('network probes say why a host is unreachable, within their bound', () => {
  it('a refused connection', async () => {
    const r = await probeHttp(`http://127.0.0.1:${closedPort}/`, { timeoutMs: 2000 });
    expect(r).toMatchObject({ ok: false, reason: 'unreachable: connection refused' });
  });

  it('a name that does not resolve (.invalid never does)', async () => {
    const r = await probeHttp('https://no-such-host.invalid/', { timeoutMs: 2000 });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^unreachable: DNS failure \((ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\)/);
  });

  it('a host that accepts but never answers ends at the bound', async () => {
    const started = performance.now();
    const r = await probeHttp(`http://127.0.0.1:${portOf(silent)}/`, { timeoutMs: 300 });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^unreachable: timeout: GET http:\/\/127\.0\.0\.1:\d+ took over \d+ ms/);
    expect(performance.now() - started).toBeLessThan(2000);
    const s = await probeSocket('127.0.0.1', portOf(silent), { tls: true, timeoutMs: 300 });
    expect(s).toMatchObject({ ok: false, tls: false });
  });

  it('a certificate that does not validate is a TLS failure; trusted, the same host answers', async () => {
    const url = `https://127.0.0.1:${portOf(tlsServer)}/`;
    const bad = await probeHttp(url, { timeoutMs: 2000 });
    expect(bad).toMatchObject({ ok: false, tls: true });
    expect(!bad.ok && bad.reason).toMatch(/^TLS does not validate: /);
    const good = await probeHttp(url, { timeoutMs: 2000, ca: LOOPBACK_CERT_PEM });
    expect(good).toMatchObject({ ok: true, status: 200 });
    expect(good.ok && good.date).toBeTruthy();
    const sock = await probeSocket('127.0.0.1', portOf(tlsServer), { tls: true, timeoutMs: 2000 });
    expect(sock).toMatchObject({ ok: false, tls: true });
  });
});
