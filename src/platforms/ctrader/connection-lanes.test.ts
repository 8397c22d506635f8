import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PT } from '../../protocols/ctrader/payload-types.js';
import { SimBroker } from '../../simulator/broker.js';
import { startCTraderSimServer, type CTraderSimServer } from '../../simulator/ctrader/server.js';
import { CTraderConnection } from './connection.js';

describe('a cTrader connection’s rate window with reads and trading writes', () => {
  let server: CTraderSimServer;
  let conn: CTraderConnection;

  beforeAll(async () => {
    server = await startCTraderSimServer(new SimBroker({ seed: 11 }));
    conn = new CTraderConnection({
      endpoint: { ...server.endpoints.demo, ca: server.ca },
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      requestTimeoutMs: 5_000,
      rateLimitPerSecond: 10,
      writeReserve: 4,
    });
    await conn.ready();
  });
  afterAll(async () => {
    await conn?.close();
    await server?.close();
  });

  it('sends a write at once while reads wait for their share of the window', async () => {
    const done: string[] = [];
    const settle = (name: string, p: Promise<unknown>) =>
      p.then(
        () => done.push(name),
        () => done.push(name),
      );
    // 12 reads: 6 take the read share (10 places, 4 kept for writes), 6 wait a second past the first answers. In one
    // first-come lane the first 10 reads would take every place and the write would wait a second behind them.
    const reads = Array.from({ length: 12 }, (_, i) => settle(`read${i}`, conn.request(PT.VERSION_REQ, {})));
    // An order (for an account not authorised here: the server answers it with an error, which is enough) queued
    // after them goes out now, not behind the waiting reads.
    const write = settle('write', conn.request(PT.NEW_ORDER_REQ, { ctidTraderAccountId: '1' }, { write: true }));
    await Promise.all([...reads, write]);
    const at = done.indexOf('write');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(done.indexOf('read6'));
    expect(done.slice(-6).sort()).toEqual(['read10', 'read11', 'read6', 'read7', 'read8', 'read9']);
  }, 30_000);
});
