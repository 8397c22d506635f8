import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, exited, killStarted, until } from '../helpers/cli-process.js';
import { runCli } from '../helpers/cli-run.js';
import { freePort } from '../helpers/free-port.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { PG_ADMIN_URL, requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const ready = (await requirePostgres()) && (await requireNats());

const readyz = async (port: number) => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
    return {
      status: res.status,
      body: (await res.json()) as { ready: boolean; checks: Record<string, { ok: boolean }> },
    };
  } catch {
    return null;
  }
};

/** The database URL through the proxy, with a password the log must never show. */
function through(proxy: TcpProxy, url: string, password: string): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  u.password = password;
  return u.toString();
}

/**
 * A worker, an api and a `serve` started while PostgreSQL cannot be reached (a relay that drops every
 * connection, as during a restart) do not exit: they log that they wait, without the URL's password, answer
 * /readyz 503 with the `store` check failing, and come up (readyz 200, the worker's leases taken) once the relay
 * lets them through. Today's behaviour it replaces: the process exited at once with "cannot connect".
 */
describe.runIf(ready)('processes started before PostgreSQL', () => {
  let proxy: TcpProxy | null = null;
  const cleanups: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    killStarted();
    await proxy?.close();
    for (const c of cleanups) await c();
  });

  it('wait for it, not ready, and come up when it is reachable', { timeout: 180_000 }, async () => {
    const pg = new URL(PG_ADMIN_URL);
    proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    proxy.cut();
    // serve holds the whole database (serve:exclusive): it gets one of its own.
    const [scaled, single] = [await tempDatabase(), await tempDatabase()];
    cleanups.push(scaled.drop, single.drop);
    const dataDir = mkdtempSync(join(tmpdir(), 'ct-store-wait-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const secret = `pw-${randomBytes(6).toString('hex')}`;
    const [apiPort, workerPort, servePort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      DATABASE_URL: through(proxy, scaled.url, secret),
      NATS_URL,
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    };
    const procs: Record<string, ChildProcess> = {
      worker: cli(['worker', '--port', String(workerPort), '--json'], { ...env, COPYTRADE_LEASE_TTL_MS: '3000' }),
      api: cli(['api', '--port', String(apiPort), '--json'], env),
      serve: cli(['serve', '--port', String(servePort), '--data-dir', dataDir, '--json'], {
        ...env,
        DATABASE_URL: through(proxy, single.url, secret),
      }),
    };
    const ports: Record<string, number> = { worker: workerPort, api: apiPort, serve: servePort };
    const output: Record<string, string> = { worker: '', api: '', serve: '' };
    for (const [name, child] of Object.entries(procs)) {
      child.stdout?.on('data', (c) => {
        output[name] += String(c);
      });
      child.stderr?.on('data', (c) => {
        output[name] += String(c);
      });
    }
    const exitedEarly = () => Object.entries(procs).filter(([, c]) => c.exitCode !== null || c.signalCode !== null);
    const t0 = Date.now();
    await until(
      'all three log that they wait for PostgreSQL',
      () => {
        if (exitedEarly().length > 0)
          throw new Error(
            `exited while PostgreSQL was unreachable: ${exitedEarly()
              .map(([n, c]) => `${n} (${c.exitCode}): ${output[n]!.slice(-1500)}`)
              .join('\n')}`,
          );
        return Object.values(output).every((o) => /PostgreSQL is not reachable/.test(o));
      },
      60_000,
    );
    for (const [name, port] of Object.entries(ports)) {
      await until(
        `readyz answers for ${name} while PostgreSQL is unreachable`,
        async () => (await readyz(port)) !== null,
        60_000,
      );
      const r = (await readyz(port))!;
      expect(r.status).toBe(503);
      expect(r.body.ready).toBe(false);
      expect(r.body.checks.store).toMatchObject({ ok: false });
    }
    // Still waiting a few attempts later: the backoff keeps it alive, it does not give up.
    await until(
      'a third attempt logged by each',
      () => Object.values(output).every((o) => (o.match(/PostgreSQL is not reachable/g) ?? []).length >= 3),
      60_000,
    );
    expect(exitedEarly()).toEqual([]);
    const waited = Date.now() - t0;

    proxy.restore();
    const t1 = Date.now();
    for (const [name, port] of Object.entries(ports))
      await until(
        `readyz 200 for ${name} once PostgreSQL is reachable`,
        async () => (await readyz(port))?.status === 200,
        90_000,
      );
    const upAfter = Date.now() - t1;
    const w = (await readyz(workerPort))!;
    expect(w.body.checks).toMatchObject({ store: { ok: true }, bus: { ok: true }, leases: { ok: true } });
    await until('the worker printed its start', () => /"instanceId"/.test(output.worker!), 30_000);
    const all = Object.values(output).join('\n');
    expect(all).not.toContain(secret);
    expect(output.worker).toContain(`127.0.0.1:${proxy.port}`);
    console.log(`waited ${waited} ms with PostgreSQL away; all three ready ${upAfter} ms after it came back`);

    for (const c of Object.values(procs)) c.kill('SIGTERM');
    await Promise.all(Object.values(procs).map((c) => exited(c)));
  });
  it('serve waiting for PostgreSQL stops on SIGTERM, exit 0', { timeout: 90_000 }, async () => {
    const pg = new URL(PG_ADMIN_URL);
    const relay = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    cleanups.push(() => relay.close());
    relay.cut();
    const db = await tempDatabase();
    cleanups.push(db.drop);
    const dataDir = mkdtempSync(join(tmpdir(), 'ct-store-wait-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const serve = cli(['serve', '--port', String(await freePort()), '--data-dir', dataDir], {
      DATABASE_URL: through(relay, db.url, 'pw'),
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    });
    let output = '';
    serve.stdout?.on('data', (c) => {
      output += String(c);
    });
    serve.stderr?.on('data', (c) => {
      output += String(c);
    });
    await until('serve waits for PostgreSQL', () => /PostgreSQL is not reachable/.test(output), 60_000);
    const t0 = Date.now();
    serve.kill('SIGTERM');
    await exited(serve);
    const stoppedIn = Date.now() - t0;
    expect(serve.exitCode).toBe(0);
    expect(output).toContain('stopped before the start was done');
    console.log(`serve waiting for PostgreSQL: SIGTERM to exit ${stoppedIn} ms`);
  });
  it('an api and a worker ride out an outage after their start: 503 meanwhile, ready again after', {
    timeout: 150_000,
  }, async () => {
    const pg = new URL(PG_ADMIN_URL);
    const relay = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    cleanups.push(() => relay.close());
    const db = await tempDatabase();
    cleanups.push(db.drop);
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const env = {
      DATABASE_URL: through(relay, db.url, 'pw'),
      NATS_URL,
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    };
    const worker = cli(['worker', '--port', String(workerPort), '--json'], { ...env, COPYTRADE_LEASE_TTL_MS: '3000' });
    const api = cli(['api', '--port', String(apiPort), '--json'], env);
    let logs = '';
    for (const c of [worker, api]) {
      c.stdout?.on('data', (d) => {
        logs += String(d);
      });
      c.stderr?.on('data', (d) => {
        logs += String(d);
      });
    }
    for (const port of [apiPort, workerPort])
      await until(`readyz 200 on ${port}`, async () => (await readyz(port))?.status === 200, 90_000);
    // An API key of a user (the operator's commands, on the database directly).
    const admin = { DATABASE_URL: db.url, COPYTRADE_SECRET_KEY: env.COPYTRADE_SECRET_KEY };
    expect(
      (await runCli(['users', 'create', '--email', 'o@example.com', '--password', 'correct horse battery'], admin))
        .code,
    ).toBe(0);
    const key = await runCli(['keys', 'create', '--email', 'o@example.com', '--json'], admin);
    const apiKey = (JSON.parse(key.stdout) as { apiKey: string }).apiKey;
    expect(
      (await fetch(`http://127.0.0.1:${apiPort}/v1/accounts`, { headers: { authorization: `Bearer ${apiKey}` } }))
        .status,
    ).toBe(200);

    relay.cut();
    for (const port of [apiPort, workerPort])
      await until(
        `readyz 503 with store failing on ${port}`,
        async () => {
          const r = await readyz(port);
          return r?.status === 503 && r.body.checks.store?.ok === false;
        },
        30_000,
      );
    // A read (authentication reads the store first) is a 503 store_unavailable, not a 500.
    const res = await fetch(`http://127.0.0.1:${apiPort}/v1/accounts`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(await res.json()).toMatchObject({ code: 'store_unavailable' });
    // The worker's lease rounds fail meanwhile: past its lease TTL (3 s) without the store, it must still run.
    await until('the worker logged a failed lease round', () => /lease (renewal|round) failed/.test(logs), 30_000);
    expect(worker.exitCode).toBeNull();
    expect(api.exitCode).toBeNull();

    relay.restore();
    for (const port of [apiPort, workerPort])
      await until(`readyz 200 again on ${port}`, async () => (await readyz(port))?.status === 200, 60_000);
    expect(worker.exitCode).toBeNull();
    expect(api.exitCode).toBeNull();
    worker.kill('SIGTERM');
    api.kill('SIGTERM');
    await Promise.all([exited(worker), exited(api)]);
  });
});
