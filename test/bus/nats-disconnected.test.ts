import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BusDisconnected, NatsBus } from '../../src/bus/nats-bus.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const natsUp = await requireNats();

/**
 * An order request sent while the api's NATS client reconnects waited in the client's buffer: the api answered 409
 * `write_outcome_unknown` only after its whole request timeout, and the buffered request could still reach the
 * worker after the reconnect and be acted on. It is now refused before it is sent, at once.
 */
describe.runIf(natsUp)('a request while the NATS connection is down', () => {
  it('is refused at once with nothing sent, and requests flow again after the reconnect', async () => {
    const nats = new URL(NATS_URL);
    const proxy = await startTcpProxy({ host: nats.hostname, port: Number(nats.port || 4222) });
    const prefix = `ct_${randomBytes(4).toString('hex')}`;
    const server = await NatsBus.connect(NATS_URL, { prefix });
    const client = await NatsBus.connect(`nats://127.0.0.1:${proxy.port}`, { prefix });
    const seen: string[] = [];
    const served = server.serve('orders.m1', async (data) => {
      seen.push(data);
      return `ok ${data}`;
    });
    try {
      await server.ping();
      expect(await client.request('orders.m1', 'before', 5_000)).toBe('ok before');
      proxy.cut();
      // The client notices the cut (its ping fails at once once it knows), then refuses without sending.
      await expect
        .poll(async () => client.request('orders.m1', 'during', 500).catch((err: unknown) => err), {
          timeout: 15_000,
          interval: 100,
        })
        .toBeInstanceOf(BusDisconnected);
      const t0 = performance.now();
      await expect(client.request('orders.m1', 'during-2', 30_000)).rejects.toBeInstanceOf(BusDisconnected);
      expect(performance.now() - t0).toBeLessThan(1_000);
      proxy.restore();
      await expect
        .poll(async () => client.request('orders.m1', 'after', 2_000).catch(() => 'refused'), {
          timeout: 20_000,
          interval: 200,
        })
        .toBe('ok after');
      // What was refused never reached the worker, before or after the reconnect.
      expect(seen).not.toContain('during-2');
    } finally {
      served.stop();
      await client.close();
      await server.close();
      await proxy.close();
    }
  }, 60_000);
});
