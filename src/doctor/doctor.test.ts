import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKeyFile } from '../auth/credential-box.js';
import { loadConfig } from '../config/config.js';
import type { PlatformEndpoints } from '../platforms/endpoints.js';
import type { CheckResult } from './check.js';
import { runDoctor } from './doctor.js';
import { natsCheck } from './local-checks.js';
import { clockCheck } from './platform-checks.js';

let dir: string;
let fresh: Server;
let stale: Server;
const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
const serve = (date: () => string) =>
  new Promise<Server>((r) => {
    const s = createServer((_req, res) => {
      // Node sets Date itself unless told otherwise: this server answers from a clock an hour behind.
      res.sendDate = false;
      res.setHeader('date', date());
      res.end('{}');
    });
    s.listen(0, '127.0.0.1', () => r(s));
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-doctor-'));
  fresh = await serve(() => new Date().toUTCString());
  stale = await serve(() => new Date(Date.now() - 3600_000).toUTCString());
});
afterAll(async () => {
  await new Promise((r) => fresh.close(r));
  await new Promise((r) => stale.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const endpoints = (base: string, over: Partial<PlatformEndpoints['platformc']> = {}): PlatformEndpoints => ({
  platforma: { baseUrl: base, token: 'tok' },
  platformb: { baseUrl: () => base },
  platformd: { baseUrl: () => base },
  platformc: {
    endpoint: () => ({ host: '127.0.0.1', port: 1 }),
    oauthBaseUrl: base,
    clientId: 'id',
    clientSecret: 's',
    ...over,
  },
});
const byCheck = (rs: CheckResult[], name: string) => rs.find((r) => r.check === name);

describe('runDoctor', () => {
  it('a host answering with an hour-old Date header fails the clock check, naming the host', async () => {
    const cfg = loadConfig({ dataDir: join(dir, 'a') }, {});
    const rs = await runDoctor({ cfg, env: {}, endpoints: endpoints(url(stale)), platforms: ['platforma'] });
    expect(byCheck(rs, 'platforma.host')?.status).toBe('ok');
    const clock = byCheck(rs, 'clock')!;
    expect(clock.status).toBe('fail');
    expect(clock.detail).toMatch(/clock is 360[01] s ahead of 127\.0\.0\.1:\d+/);
    expect(clock.fix).toMatch(/NTP/);
  });

  it('an injected clock two minutes behind fails it too; the true clock passes', async () => {
    const cfg = loadConfig({ dataDir: join(dir, 'b') }, {});
    const o = { cfg, env: {}, endpoints: endpoints(url(fresh)), platforms: ['platformb'] as const };
    const skewed = await runDoctor({ ...o, now: () => Date.now() - 120_000 });
    expect(byCheck(skewed, 'clock')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/behind/) });
    const right = await runDoctor(o);
    expect(byCheck(right, 'clock')?.status).toBe('ok');
  });

  it('missing cTrader credentials, an unset public URL, a bad key file mode: each named with its setting', async () => {
    const keyFile = join(dir, 'open.key');
    writeKeyFile(keyFile, [Buffer.alloc(32, 1)]);
    chmodSync(keyFile, 0o644);
    const cfg = loadConfig({ dataDir: join(dir, 'c'), secretKeyFile: keyFile }, {});
    const rs = await runDoctor({
      cfg,
      env: {},
      endpoints: endpoints(url(fresh), { clientId: '', clientSecret: '' }),
      platforms: ['platformc'],
      timeoutMs: 500,
    });
    expect(byCheck(rs, 'platformc.credentials')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('COPYTRADE_PLATFORMC_CLIENT_ID and COPYTRADE_PLATFORMC_CLIENT_SECRET'),
    });
    expect(byCheck(rs, 'platformc.redirect')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('COPYTRADE_PUBLIC_URL'),
    });
    // Port 1 on loopback: nothing listens there.
    expect(byCheck(rs, 'platformc.demo')).toMatchObject({
      status: 'fail',
      detail: '127.0.0.1:1: unreachable: connection refused',
    });
    expect(byCheck(rs, 'secret-key')).toMatchObject({ status: 'fail', fix: `chmod 600 ${keyFile}` });
    expect(byCheck(rs, 'secret-key')?.detail).toMatch(/mode 0644/);
  });

  it('a reachable public URL passes and gives the redirect URI to register', async () => {
    const keyFile = join(dir, 'ok.key');
    writeKeyFile(keyFile, [Buffer.alloc(32, 2)]);
    const cfg = loadConfig({ dataDir: join(dir, 'd'), secretKeyFile: keyFile }, {});
    const rs = await runDoctor({
      cfg,
      env: { COPYTRADE_PUBLIC_URL: url(fresh) },
      endpoints: endpoints(url(fresh)),
      platforms: ['platformc'],
    });
    expect(byCheck(rs, 'platformc.redirect')).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining(`${url(fresh)}/api/connect/platformc/callback`),
    });
    expect(byCheck(rs, 'secret-key')?.status).toBe('ok');
    expect(byCheck(rs, 'store')?.status).toBe('ok');
  });

  it('an unwritable key file source or bad COPYTRADE_SECRET_KEY fails', async () => {
    const cfg = loadConfig({ dataDir: join(dir, 'e') }, { COPYTRADE_SECRET_KEY: 'c2hvcnQ=' });
    const rs = await runDoctor({ cfg, env: {}, endpoints: endpoints(url(fresh)), platforms: [] });
    expect(byCheck(rs, 'secret-key')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/32 bytes/) });
    writeFileSync(join(dir, 'junk.key'), 'not a key\n', { mode: 0o600 });
    const junk = loadConfig({ dataDir: join(dir, 'e'), secretKeyFile: join(dir, 'junk.key') }, {});
    const rs2 = await runDoctor({ cfg: junk, env: {}, endpoints: endpoints(url(fresh)), platforms: [] });
    expect(byCheck(rs2, 'secret-key')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/cannot be read/),
    });
  });
});

describe('natsCheck', () => {
  it('a server greeting with INFO passes; one that greets otherwise or refuses fails, naming NATS_URL', async () => {
    const greet = (line: string) =>
      new Promise<NetServer>((r) => {
        const s = createNetServer((sock) => sock.end(line));
        s.listen(0, '127.0.0.1', () => r(s));
      });
    const nats = await greet('INFO {"server_id":"x"}\r\n');
    const other = await greet('SSH-2.0-OpenSSH\r\n');
    try {
      const at = (s: NetServer) => `nats://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const cfg = loadConfig({ dataDir: ':memory:' }, { NATS_URL: `${at(nats)},${at(other)},nats://127.0.0.1:1` });
      const [good, wrong, refused] = await natsCheck(cfg, 2000);
      expect(good).toMatchObject({ status: 'ok', detail: expect.stringMatching(/answered as a NATS server/) });
      expect(wrong).toMatchObject({ status: 'fail', detail: expect.stringMatching(/not as a NATS server/) });
      expect(refused).toMatchObject({ status: 'fail', detail: '127.0.0.1:1: unreachable: connection refused' });
      expect(refused?.fix).toMatch(/NATS_URL/);
    } finally {
      await new Promise((r) => nats.close(r));
      await new Promise((r) => other.close(r));
    }
  });
});

describe('clockCheck', () => {
  const at = Date.parse('2026-12-07T06:00:00Z');
  const seen = (offsetSec: number) => [{ host: 'h', date: new Date(at - offsetSec * 1000).toUTCString(), at }];
  it('grades the worst skew: under 5 s ok, to 30 s warn, beyond fail; no Date header warns', () => {
    expect(clockCheck(seen(1)).status).toBe('ok');
    expect(clockCheck(seen(-10)).status).toBe('warn');
    expect(clockCheck(seen(31))).toMatchObject({ status: 'fail', detail: "this machine's clock is 31 s ahead of h" });
    expect(clockCheck([]).status).toBe('warn');
  });
});
