import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, cli, exited, firstJson, killStarted, track } from '../helpers/cli-process.js';

const dirs: string[] = [];

afterAll(() => {
  killStarted();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Summary {
  baseUrl: string;
  v1BaseUrl: string;
  demo: { apiKey: string };
  simulator: { pid: number; endpointsFile: string; spawned: boolean } | null;
}

async function serve(dir: string): Promise<{ child: ChildProcess; s: Summary }> {
  const child = cli(['serve', '--demo', '--port', '0', '--data-dir', dir, '--json']);
  const s = await firstJson<Summary>(child, 'baseUrl');
  if (s.simulator) track(s.simulator.pid);
  return { child, s };
}

async function api<T = any>(
  s: Summary,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(s.v1BaseUrl + path, {
    method,
    headers: { authorization: `Bearer ${s.demo.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

describe('copytrade simulator in its own process', () => {
  it('keeps the brokers, with what they confirmed, across a kill -9 of the service; a clean stop stops both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-simproc-'));
    dirs.push(dir);
    const first = await serve(dir);
    const simPid = first.s.simulator?.pid;
    expect(first.s.simulator).toMatchObject({ spawned: true, endpointsFile: join(dir, 'simulator', 'endpoints.json') });

    const accounts = (
      await api<{ accounts: Array<{ id: string; name: string; role: string; groupId: string }> }>(
        first.s,
        'GET',
        '/v1/accounts',
      )
    ).body.accounts;
    const master = accounts.find((a) => a.name === 'Demo Master')!;
    const slaves = accounts.filter((a) => a.groupId === master.groupId && a.role === 'slave');
    expect(slaves.length).toBeGreaterThanOrEqual(8);
    // The demo's self-hosted MetaTrader Slave: its EA runs in the simulator process and dials this service.
    expect(slaves.some((a) => a.name.startsWith('Demo MT5 Slave (self-hosted bridge'))).toBe(true);
    const sent = await api(first.s, 'POST', `/v1/accounts/${master.id}/orders`, {
      symbol: 'EURUSD',
      side: 'buy',
      volume: 0.1,
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const positionsOf = async (s: Summary, id: string) =>
      (await api<{ positions: Array<{ id: string }> }>(s, 'GET', `/v1/accounts/${id}/positions`)).body.positions ?? [];
    // Every copy confirmed by its broker...
    await until('every Slave copy', async () =>
      (await Promise.all(slaves.map((a) => positionsOf(first.s, a.id)))).every((p) => p.length === 1),
    );
    const before = new Map(
      await Promise.all(
        [master, ...slaves].map(async (a) => [a.id, (await positionsOf(first.s, a.id)).map((p) => p.id)] as const),
      ),
    );

    // ...then the service dies without any shutdown. The brokers do not.
    first.child.kill('SIGKILL');
    await exited(first.child);
    expect(alive(simPid!)).toBe(true);

    const second = await serve(dir);
    expect(second.s.simulator).toMatchObject({ pid: simPid, spawned: false });
    for (const [id, ids] of before) expect((await positionsOf(second.s, id)).map((p) => p.id)).toEqual(ids);

    second.child.kill('SIGTERM');
    await exited(second.child);
    expect(second.child.exitCode).toBe(0);
    await until('the simulator to stop with the service', async () => !alive(simPid!), 20_000);
  }, 240_000);

  it('keeps an account it confirmed across a kill -9 of the simulator itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-simproc-'));
    dirs.push(dir);
    const start = async () => {
      const child = cli(['simulator', '--data-dir', dir, '--json']);
      const { endpointsFile } = await firstJson<{ endpointsFile: string }>(child, 'endpointsFile');
      const e = JSON.parse((await import('node:fs')).readFileSync(endpointsFile, 'utf8')) as {
        control: { url: string; token: string };
      };
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(e.control.url + path, {
          method,
          headers: { authorization: `Bearer ${e.control.token}`, 'content-type': 'application/json' },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      return { child, call };
    };
    const a = await start();
    const made = await a.call('POST', '/accounts', { balance: '1234.5', meta: { demoKey: 'kept' } });
    expect(made.status).toBe(200);
    a.child.kill('SIGKILL');
    await exited(a.child);

    const b = await start();
    try {
      const list = (await b.call('GET', '/accounts')).body as Array<{ id: string; meta: Record<string, string> }>;
      expect(list.find((x) => x.id === made.body.id)?.meta.demoKey).toBe('kept');
      expect((await b.call('GET', '/accounts', undefined)).status).toBe(200);
    } finally {
      b.child.kill('SIGTERM');
      await exited(b.child);
    }
    expect(b.child.exitCode).toBe(0);
  }, 120_000);
});
