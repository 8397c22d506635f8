import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimBroker } from '../broker.js';
import { type DxSimServer, startDxTradeSimServer } from './server.js';

describe('DXtrade simulator front end: the spec answers', () => {
  let broker: SimBroker;
  let server: DxSimServer;
  let clock = 1_000_000;
  let code = '';
  const meta = { username: 'trader', domain: 'default', password: 'pw', environment: 'demo' };

  beforeAll(async () => {
    broker = new SimBroker({ seed: 3 });
    const acc = broker.createAccount({ balance: 10_000, meta });
    broker.createAccount({ balance: 10_000, meta: { ...meta, username: 'other' } });
    code = `default:${acc.login}`;
    server = await startDxTradeSimServer(broker, { sessionTimeoutMs: 60_000, now: () => clock });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, o: { token?: string; body?: unknown; ifMatch?: string } = {}) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(o.token ? { authorization: `DXAPI ${o.token}` } : {}),
        ...(o.ifMatch ? { 'if-match': o.ifMatch } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
  const login = async () => (await call('POST', '/login', { body: { ...meta } })).body.sessionToken as string;
  const acct = (rest: string) => `/accounts/${encodeURIComponent(code)}${rest}`;

  it('a wrong password is 401 with error code 3; a good login gives a token and its timeout in ms', async () => {
    expect(await call('POST', '/login', { body: { ...meta, password: 'no' } })).toEqual({
      status: 401,
      body: { errorCode: '3', description: 'Incorrect username or password' },
    });
    const ok = await call('POST', '/login', { body: { ...meta } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ sessionToken: expect.any(String), timeout: 60_000 });
  });

  it('the token dies its timeout after the last request, and a ping in time keeps it', async () => {
    const token = await login();
    clock += 50_000;
    expect((await call('POST', '/ping', { token })).status).toBe(200);
    clock += 50_000;
    expect((await call('GET', acct('/positions'), { token })).status).toBe(200);
    clock += 61_000;
    expect((await call('GET', acct('/positions'), { token })).status).toBe(401);
  });

  it("another user's account is the same 404 (code 2) as an unknown one", async () => {
    const token = await login();
    const other = broker.accounts().find((a) => a.meta.username === 'other')!;
    for (const c of [`default:${other.login}`, 'default:nope'])
      expect(await call('GET', `/accounts/${encodeURIComponent(c)}/positions`, { token })).toEqual({
        status: 404,
        body: { errorCode: '2', description: 'Entity not found at server' },
      });
  });

  it('a reused orderCode is 409 with code 100; a bad request is 400 with code 33', async () => {
    const token = await login();
    const order = {
      orderCode: 'dup1',
      type: 'MARKET',
      instrument: 'EURUSD',
      quantity: '1000',
      positionEffect: 'OPEN',
      side: 'BUY',
      tif: 'IOC',
    };
    expect((await call('POST', acct('/orders'), { token, body: order })).status).toBe(200);
    expect(await call('POST', acct('/orders'), { token, body: order })).toMatchObject({
      status: 409,
      body: { errorCode: '100' },
    });
    expect(
      await call('POST', acct('/orders'), { token, body: { ...order, orderCode: 'x2', side: 'UP' } }),
    ).toMatchObject({
      status: 400,
      body: { errorCode: '33' },
    });
  });

  it('modify and cancel are conditional: 403 (99) without If-Match, 412 on a stale version, done with the current one', async () => {
    const token = await login();
    const price = broker.quote('EURUSD').bid.minus('0.01').toFixed();
    const limit = {
      orderCode: 'lim1',
      type: 'LIMIT',
      instrument: 'EURUSD',
      quantity: '1000',
      positionEffect: 'OPEN',
      side: 'BUY',
      limitPrice: price,
      tif: 'GTC',
    };
    expect((await call('POST', acct('/orders'), { token, body: limit })).status).toBe(200);
    const working = (await call('GET', acct('/orders'), { token })).body.orders as Array<Record<string, unknown>>;
    const mine = working.find((o) => o.clientOrderId === 'lim1')!;
    const path = acct(`/orders/${encodeURIComponent(String(mine.orderCode))}`);
    expect(await call('DELETE', path, { token })).toMatchObject({ status: 403, body: { errorCode: '99' } });
    expect((await call('DELETE', path, { token, ifMatch: '1' })).status).toBe(412);
    expect((await call('DELETE', path, { token, ifMatch: String(mine.version) })).status).toBe(200);
    expect(await call('DELETE', path, { token, ifMatch: '*' })).toMatchObject({ status: 409 });
  });

  it('an unknown instrument gives an empty list, not an error (the spec)', async () => {
    const token = await login();
    expect(await call('GET', acct('/instruments/NOSUCH'), { token })).toEqual({
      status: 200,
      body: { instruments: [] },
    });
    expect(await call('GET', '/instruments/NOSUCH', { token })).toEqual({ status: 200, body: { instruments: [] } });
  });
});
