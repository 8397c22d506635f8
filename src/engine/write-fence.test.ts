import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaleLeaseError } from '../domain/lease.js';
import { sendJson } from '../platforms/http-wire.js';
import { fencedCall } from './write-fence.js';

/** A broker that counts what reaches it. */
let server: Server;
let url: URL;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const refuse = (): never => {
  throw new StaleLeaseError('account:m1', undefined, null);
};

/** An adapter's write as the REST platforms make it: a read first, a wait in its own pacer, then the write. */
function adapterWrite(pacer: Promise<void>, opts: { swallow?: boolean } = {}) {
  return async () => {
    await sendJson(fetch, new URL('/config', url), { method: 'GET', path: '/config', headers: {}, timeoutMs: 2000 });
    await pacer;
    try {
      const r = await sendJson(fetch, url, {
        method: 'POST',
        path: '/orders',
        headers: {},
        timeoutMs: 2000,
        write: true,
      });
      return r.kind;
    } catch (err) {
      // An adapter that maps every failure of a write to an outcome (the cTrader adapter does).
      if (opts.swallow) return 'unresolved';
      throw err;
    }
  };
}

describe('fencedCall: the lease is asked again right before a write leaves', () => {
  it('a write whose lease ran out while it waited in the adapter pacer is refused and never reaches the broker', async () => {
    received.length = 0;
    let held = true;
    let release!: () => void;
    const pacer = new Promise<void>((r) => {
      release = r;
    });
    const call = fencedCall(() => held, refuse, adapterWrite(pacer));
    // The read went out under the lease; the write waits for the pacer meanwhile the lease runs out.
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setImmediate(r));
    held = false;
    release();
    await expect(call).rejects.toBeInstanceOf(StaleLeaseError);
    expect(received).toEqual(['GET /config']);
  });

  it('stays refused when the adapter turns the refusal into an outcome', async () => {
    received.length = 0;
    let held = true;
    let release!: () => void;
    const pacer = new Promise<void>((r) => {
      release = r;
    });
    const call = fencedCall(() => held, refuse, adapterWrite(pacer, { swallow: true }));
    held = false;
    release();
    await expect(call).rejects.toBeInstanceOf(StaleLeaseError);
    expect(received.filter((r) => r.startsWith('POST'))).toEqual([]);
  });

  it('a write under a held lease is sent once; without a gate (outside fencedCall) the wire sends as before', async () => {
    received.length = 0;
    await expect(fencedCall(() => true, refuse, adapterWrite(Promise.resolve()))).resolves.toBe('response');
    await adapterWrite(Promise.resolve())();
    expect(received).toEqual(['GET /config', 'POST /orders', 'GET /config', 'POST /orders']);
  });

  it('refuses before calling when the lease is already gone', async () => {
    let called = false;
    await expect(
      fencedCall(
        () => false,
        refuse,
        async () => {
          called = true;
        },
      ),
    ).rejects.toBeInstanceOf(StaleLeaseError);
    expect(called).toBe(false);
  });
});
