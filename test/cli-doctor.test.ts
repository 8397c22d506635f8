import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKeyFile } from '../src/auth/credential-box.js';
import { CLI } from './helpers/cli-command.js';
import { cli as spawnCli, firstJson, killStarted } from './helpers/cli-process.js';

interface Check {
  status: 'ok' | 'warn' | 'fail';
  check: string;
  detail: string;
  fix: string | null;
}

let dir: string;
let stale: Server;

/** Every setting the doctor reads, cleared: the machine's own environment must not leak into a run. */
const CLEAN = Object.fromEntries(
  [
    'DATABASE_URL',
    'NATS_URL',
    'COPYTRADE_DEMO',
    'COPYTRADE_SECRET_KEY',
    'COPYTRADE_SECRET_KEY_FILE',
    'COPYTRADE_PUBLIC_URL',
    'COPYTRADE_SIMULATOR',
    ...['A_TOKEN', 'A_URL', 'A_CLIENT_API_URL', 'B_DEMO_URL', 'B_LIVE_URL'].map((s) => `COPYTRADE_PLATFORM${s}`),
    ...['CLIENT_ID', 'CLIENT_SECRET', 'OAUTH_URL', 'DEMO_HOST', 'LIVE_HOST', 'PORT'].map(
      (s) => `COPYTRADE_PLATFORMC_${s}`,
    ),
  ].map((k) => [k, '']),
);

async function doctor(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [...CLI, 'doctor', ...args],
      { env: { ...process.env, ...CLEAN, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-doctor-cli-'));
  stale = await new Promise<Server>((r) => {
    const s = createServer((_req, res) => {
      res.sendDate = false;
      res.setHeader('date', new Date(Date.now() - 3600_000).toUTCString());
      res.end('{}');
    });
    s.listen(0, '127.0.0.1', () => r(s));
  });
});
afterAll(async () => {
  killStarted();
  await new Promise((r) => stale.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('copytrade doctor', () => {
  it('against a started simulator in demo configuration: every check ok, exit 0', async () => {
    const data = join(dir, 'demo');
    const sim = spawnCli(['simulator', '--data-dir', join(data, 'simulator'), '--json']);
    await firstJson(sim, 'endpointsFile');
    const json = await doctor(['--demo', '--data-dir', data, '--json']);
    expect(json.code, json.stdout + json.stderr).toBe(0);
    const checks = JSON.parse(json.stdout) as Check[];
    expect(checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(checks.map((c) => c.check)).toEqual(
      expect.arrayContaining([
        'simulator',
        'platforma.credentials',
        'platforma.host',
        'platformb.demo',
        'platformb.live',
        'platformc.credentials',
        'platformc.oauth',
        'platformc.demo',
        'platformc.live',
        'platformc.redirect',
        'store',
        'secret-key',
        'nats',
        'clock',
      ]),
    );
    const human = await doctor(['--demo', '--data-dir', data]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^OK {4}platformc\.demo +127\.0\.0\.1:\d+ accepted a TLS connection/m);
    expect(human.stderr).toMatch(/\d+ ok, 0 warn, 0 fail/);
  }, 90_000);

  it('a broken configuration: each problem named with its fix, --json shape, exit 1', async () => {
    const keyFile = join(dir, 'shared.key');
    writeKeyFile(keyFile, [Buffer.alloc(32, 7)]);
    chmodSync(keyFile, 0o644);
    const staleUrl = `http://127.0.0.1:${(stale.address() as AddressInfo).port}`;
    const r = await doctor(['--data-dir', join(dir, 'prod'), '--secret-key-file', keyFile, '--json'], {
      COPYTRADE_PLATFORMA_TOKEN: 'tok',
      COPYTRADE_PLATFORMA_URL: staleUrl,
      COPYTRADE_PLATFORMB_DEMO_URL: 'https://demo.doctor-test.invalid/backend-api',
      // Port 1 on loopback: nothing listens, the connection is refused.
      COPYTRADE_PLATFORMB_LIVE_URL: 'http://127.0.0.1:1/backend-api',
      COPYTRADE_PLATFORMC_OAUTH_URL: 'https://oauth.doctor-test.invalid',
      COPYTRADE_PLATFORMC_DEMO_HOST: '127.0.0.1',
      COPYTRADE_PLATFORMC_LIVE_HOST: '127.0.0.1',
      COPYTRADE_PLATFORMC_PORT: '1',
    });
    expect(r.code, r.stderr).toBe(1);
    const checks = JSON.parse(r.stdout) as Check[];
    for (const c of checks) {
      expect(Object.keys(c).sort()).toEqual(['check', 'detail', 'fix', 'status']);
      expect(['ok', 'warn', 'fail']).toContain(c.status);
      if (c.status !== 'ok') expect(c.fix).toEqual(expect.any(String));
    }
    const of = (name: string) => checks.find((c) => c.check === name)!;
    expect(of('platformc.credentials')).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/COPYTRADE_PLATFORMC_CLIENT_ID/),
    });
    expect(of('platformb.demo')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/unreachable: DNS failure/),
    });
    expect(of('platformb.live')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/unreachable: connection refused/),
      fix: expect.stringMatching(/COPYTRADE_PLATFORMB_LIVE_URL/),
    });
    expect(of('platformc.demo')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/connection refused/) });
    expect(of('platformc.redirect')).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/COPYTRADE_PUBLIC_URL/),
    });
    expect(of('secret-key')).toMatchObject({ status: 'fail', fix: `chmod 600 ${keyFile}` });
    expect(of('platforma.host').status).toBe('ok');
    expect(of('clock')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/36\d\d s ahead of 127\.0\.0\.1/),
    });
  }, 60_000);
});
