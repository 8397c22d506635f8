import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { startTestService, type TestService } from '../helpers/service.js';

const available = await requireNats();

/** A TCP proxy to the NATS server that the test can cut (every connection dropped, port refused) and restore. */
function natsProxy() {
  const target = new URL(NATS_URL.replace(/^nats:/, 'http:'));
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = createConnection({ host: target.hostname, port: Number(target.port || 4222) });
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('close', () => sockets.delete(sock));
          sock.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  return {
    listen,
    url: () => `nats://127.0.0.1:${port}`,
    async cut() {
      const s = server;
      server = null;
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
    },
  };
}

describe.runIf(available)('GET /readyz with a NATS bus', () => {
  const proxy = natsProxy();
  let svc: TestService | null = null;
  afterAll(async () => {
    await svc?.close();
    await proxy.cut();
  });

  it('names the bus: 200 while connected, 503 while the connection is cut, 200 again once it is back', async () => {
    await proxy.listen();
    svc = await startTestService({ env: { NATS_URL: proxy.url() } });
    const ready = await svc.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject({ bus: { ok: true }, store: { ok: true }, started: { ok: true } });

    await proxy.cut();
    await expect
      .poll(async () => (await svc!.call('GET', '/readyz')).status, { timeout: 10_000, interval: 100 })
      .toBe(503);
    const down = await svc.call('GET', '/readyz');
    expect(down.body).toMatchObject({ ready: false, checks: { bus: { ok: false }, store: { ok: true } } });
    // The process is still alive: liveness and readiness are different questions.
    expect((await svc.call('GET', '/healthz')).status).toBe(200);

    await proxy.listen();
    await expect
      .poll(async () => (await svc!.call('GET', '/readyz')).status, { timeout: 15_000, interval: 200 })
      .toBe(200);
  }, 60_000);
});
