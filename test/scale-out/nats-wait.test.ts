import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, exited, killStarted, until } from '../helpers/cli-process.js';
import { freePort } from '../helpers/free-port.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';
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

/**
 * An api and a worker started while NATS cannot be reached (a relay that drops every connection) do not exit:
 * they log that they wait, without the URL's password, answer /readyz 503 with the `bus` check failing, and
 * come up (readyz 200, the worker's leases taken) once the relay lets them through.
 */
describe.runIf(ready)('api and worker started before NATS', () => {
  let proxy: TcpProxy | null = null;
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    killStarted();
    await proxy?.close();
    for (const d of drops) await d();
  });

  it('wait for it, not ready, and come up when it is reachable', { timeout: 120_000 }, async () => {
    const nats = new URL(NATS_URL);
    proxy = await startTcpProxy({ host: nats.hostname, port: Number(nats.port || 4222) });
    proxy.cut();
    const db = await tempDatabase();
    drops.push(db.drop);
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const env = {
      DATABASE_URL: db.url,
      // Credentials in the URL (a server without auth ignores them): they must not reach a log line.
      NATS_URL: `nats://copytrade:pw-${randomBytes(6).toString('hex')}@127.0.0.1:${proxy.port}`,
      COPYTRADE_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    };
    const secret = new URL(env.NATS_URL).password;
    const worker = cli(['worker', '--port', String(workerPort), '--json'], { ...env, COPYTRADE_LEASE_TTL_MS: '3000' });
    const api = cli(['api', '--port', String(apiPort), '--json'], env);
    const output = { worker: '', api: '' };
    for (const [name, child] of [
      ['worker', worker],
      ['api', api],
    ] as const) {
      child.stdout?.on('data', (c) => {
        output[name] += String(c);
      });
      child.stderr?.on('data', (c) => {
        output[name] += String(c);
      });
    }

    for (const port of [workerPort, apiPort]) {
      await until(
        `readyz answers on ${port} while NATS is unreachable`,
        async () => (await readyz(port)) !== null,
        60_000,
      );
      const r = (await readyz(port))!;
      expect(r.status).toBe(503);
      expect(r.body.ready).toBe(false);
      expect(r.body.checks.bus).toMatchObject({ ok: false });
    }
    await until(
      'both log that they wait for NATS',
      () => /NATS is not reachable/.test(output.worker) && /NATS is not reachable/.test(output.api),
      30_000,
    );
    expect(worker.exitCode).toBeNull();
    expect(api.exitCode).toBeNull();

    proxy.restore();
    for (const port of [workerPort, apiPort])
      await until(
        `readyz 200 on ${port} once NATS is reachable`,
        async () => (await readyz(port))?.status === 200,
        60_000,
      );
    const w = (await readyz(workerPort))!;
    expect(w.body.checks).toMatchObject({ bus: { ok: true }, leases: { ok: true } });
    await until('the worker printed its start', () => /"instanceId"/.test(output.worker), 30_000);
    expect(output.worker + output.api).not.toContain(secret);
    expect(output.worker).toContain(`127.0.0.1:${proxy.port}`);

    worker.kill('SIGTERM');
    api.kill('SIGTERM');
    await Promise.all([exited(worker), exited(api)]);
  });
});
