import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { underWriteGate } from '../../domain/write-gate.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { SimBroker } from '../../simulator/broker.js';
import { startCTraderSimServer, type CTraderSimServer } from '../../simulator/ctrader/server.js';
import { CTraderConnection } from './connection.js';

describe('a write refused by its write gate on a cTrader connection', () => {
  let server: CTraderSimServer;
  let conn: CTraderConnection;

  beforeAll(async () => {
    server = await startCTraderSimServer(new SimBroker({ seed: 7 }));
    conn = new CTraderConnection({
      endpoint: { ...server.endpoints.demo, ca: server.ca },
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      requestTimeoutMs: 2_000,
      rateLimitPerSecond: 2,
    });
    await conn.ready();
  });
  afterAll(async () => {
    await conn?.close();
    await server?.close();
  });

  it('gives its place in the rate window back: later requests on the connection are still sent', async () => {
    const lapsed = new Error('lease lapsed');
    const refusedWrite = () =>
      underWriteGate(
        () => {
          throw lapsed;
        },
        () => conn.request(PT.NEW_ORDER_REQ, { ctidTraderAccountId: '1' }, { write: true }),
      );
    // As many refused writes as the window has places: each one held its place for ever (never answered).
    await expect(refusedWrite()).rejects.toBe(lapsed);
    await expect(refusedWrite()).rejects.toBe(lapsed);
    // The signal only bounds the test: with the places leaked, the request waits in the queue until it fires and
    // is given up unsent; with them back, it is sent within about a second and answered.
    const [version] = await conn.request(PT.VERSION_REQ, {}, { signal: AbortSignal.timeout(10_000) });
    expect(version!.payloadType).toBe(PT.VERSION_RES);
  }, 30_000);
});
