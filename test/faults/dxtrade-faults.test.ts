import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { DxTradeAdapter } from '../../src/platforms/dxtrade/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startDxTradeSimServer } from '../../src/simulator/dxtrade/server.js';
import { appError } from '../helpers/app-error.js';

/**
 * What only DXtrade has, through the adapter over loopback: a session token that dies a timeout after the last
 * request (renewed by /ping, replaced by a new login after a 401), a write never repeated after a 401, and the
 * spec's error answers. `now` is shared by the simulator and the adapter, so no test sleeps.
 */

const META = { username: 'dx-faults', domain: 'default', password: 'secret-pw', environment: 'demo' };
let clock = 1_000_000;
const now = () => clock;

let tagSeq = 0;
const newTag = () => `fd${Date.now().toString(36)}${(++tagSeq).toString(36)}`;
const market = (tag: string): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('0.10'),
  tag,
});

describe('DXtrade faults', () => {
  let broker: SimBroker;
  let server: Awaited<ReturnType<typeof startDxTradeSimServer>>;
  let adapter: DxTradeAdapter;
  let accId = '';
  let logins = 0;
  let pings = 0;

  beforeAll(async () => {
    broker = new SimBroker({ seed: 5 });
    const acc = broker.createAccount({ balance: 50_000, meta: META });
    accId = acc.id;
    broker.setPrice('EURUSD', '1.08000');
    server = await startDxTradeSimServer(broker, { sessionTimeoutMs: 60_000, now });
    const counting: typeof fetch = (input, init) => {
      const path = String(input);
      if (path.endsWith('/login')) logins++;
      if (path.endsWith('/ping')) pings++;
      return fetch(input, init);
    };
    adapter = new DxTradeAdapter({
      baseUrl: server.baseUrl,
      ...META,
      account: `default:${acc.login}`,
      timeoutMs: 300,
      fetch: counting,
      now,
    });
    await adapter.connect();
  });
  afterEach(() => broker.faults.clear());
  afterAll(async () => {
    await adapter.close();
    await server.close();
  });

  it('pings the session when half its timeout has passed, and keeps the token', async () => {
    const before = { logins, pings };
    clock += 35_000;
    await adapter.listPositions();
    expect({ logins: logins - before.logins, pings: pings - before.pings }).toEqual({ logins: 0, pings: 1 });
  });

  it('a token that died (idle past its timeout) gets a new login, and the read succeeds', async () => {
    const before = logins;
    clock += 10 * 60_000;
    // Half the timeout has passed too: the ping meets 401 and the adapter logs in again.
    expect(await adapter.listPositions()).toEqual([]);
    expect(logins - before).toBe(1);
  });

  it('an expired token on a read: one new login and the read is repeated', async () => {
    broker.faults.inject({ op: 'read', kind: 'token_expired', accountId: accId });
    const before = logins;
    expect(await adapter.listOrders()).toEqual([]);
    expect(logins - before).toBe(1);
  });

  it('an expired token on a write: refused, not repeated, nothing applied; the next write goes through', async () => {
    const tag = newTag();
    broker.faults.inject({ op: 'placeOrder', kind: 'token_expired', accountId: accId });
    const out = await adapter.placeOrder(market(tag));
    expect(out).toMatchObject({ kind: 'rejected', code: 'broker_auth_failed' });
    expect(broker.findByTag(accId, tag)).toEqual({});
    expect(await adapter.placeOrder(market(newTag()))).toMatchObject({ kind: 'confirmed' });
  });

  it('a reused orderCode is rejected (409, code 100) and opens nothing more', async () => {
    const tag = newTag();
    expect(await adapter.placeOrder(market(tag))).toMatchObject({ kind: 'confirmed' });
    const again = await adapter.placeOrder(market(tag));
    expect(again).toMatchObject({ kind: 'rejected', code: 'broker_rejected' });
    expect(again.kind === 'rejected' && again.message).toMatch(/already exists.*\(100\)/);
    expect(broker.positions(accId).filter((p) => p.tag === tag)).toHaveLength(1);
  });

  it('a wrong password is broker_auth_failed at the first read', async () => {
    const bad = new DxTradeAdapter({
      baseUrl: server.baseUrl,
      ...META,
      password: 'wrong',
      account: 'default:x',
      timeoutMs: 300,
    });
    expect((await appError(bad.accountInfo())).code).toBe('broker_auth_failed');
    await bad.close();
  });
});
