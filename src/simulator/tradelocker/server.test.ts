import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimBroker } from '../broker.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from './server.js';

/** The wire itself, checked with plain fetch: what a third-party TradeLocker client would see. */

const META = { email: 'Wire@Example.com', password: 'pw', server: 'WIRE', environment: 'demo' };

describe('TradeLocker simulator front end (wire)', () => {
  let broker: SimBroker;
  let srv: TradeLockerSimServer;
  let token: string;
  let login: string;

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${srv.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const send = (method: string, path: string, body: unknown) =>
    fetch(`${srv.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, accNum: '1', 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    broker = new SimBroker({ seed: 5 });
    login = broker.createAccount({ balance: 1000, meta: META }).login;
    broker.createAccount({ balance: 2000, meta: { ...META, environment: 'live' } });
    broker.createAccount({ balance: 3000, meta: { ...META, email: 'other@example.com' } });
    srv = await startTradeLockerSimServer(broker, { environment: 'demo' });
  });
  afterAll(() => srv.close());

  it('signs in with HTTP 201 and a JWT; a wrong password is refused', async () => {
    const bad = await fetch(`${srv.baseUrl}/auth/jwt/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...META, password: 'x' }) });
    expect(bad.status).toBe(401);
    const r = await fetch(`${srv.baseUrl}/auth/jwt/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'wire@example.com', password: 'pw', server: 'WIRE' }),
    });
    expect(r.status).toBe(201);
    const body = (await r.json()) as { accessToken: string; refreshToken: string; expireDate: string };
    expect(body.accessToken.split('.')).toHaveLength(3);
    expect(Date.parse(body.expireDate)).toBeGreaterThan(Date.now());
    token = body.accessToken;
    const refreshed = await fetch(`${srv.baseUrl}/auth/jwt/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: body.refreshToken }) });
    expect(refreshed.status).toBe(201);
  });

  it('all-accounts lists only this user on this environment, numbers as strings', async () => {
    const r = await get('/auth/jwt/all-accounts');
    const body = (await r.json()) as { accounts: { id: string; accNum: string; accountBalance: string }[] };
    expect(body.accounts).toEqual([expect.objectContaining({ id: login, accNum: '1', accountBalance: '1000.00', currency: 'USD' })]);
  });

  it('requires the accNum header on /trade routes and a matching accountId', async () => {
    expect((await get(`/trade/accounts/${login}/positions`)).status).toBe(400);
    expect((await get('/trade/accounts/999/positions', { accNum: '1' })).status).toBe(403);
    expect((await get(`/trade/accounts/${login}/positions`, { accNum: '1' })).status).toBe(200);
    expect((await fetch(`${srv.baseUrl}/trade/config`, { headers: { accNum: '1' } })).status).toBe(401);
  });

  it('serves column maps and all 18 rate-limit route types', async () => {
    const body = (await (await get('/trade/config', { accNum: '1' })).json()) as { s: string; d: Record<string, { columns?: unknown[] }> & { rateLimits: unknown[] } };
    expect(body.s).toBe('ok');
    expect(body.d.positionsConfig!.columns).toHaveLength(11);
    expect(body.d.ordersConfig!.columns).toHaveLength(22);
    expect(body.d.accountDetailsConfig!.columns).toHaveLength(26);
    expect(body.d.rateLimits).toHaveLength(18);
  });

  it('places an order, echoes strategyId, ids as strings past 2^53; SL shows as a child stop order', async () => {
    const instruments = (await (await get(`/trade/accounts/${login}/instruments`, { accNum: '1' })).json()) as {
      d: { instruments: { name: string; tradableInstrumentId: number; routes: { id: number; type: string }[] }[] };
    };
    const eur = instruments.d.instruments.find((i) => i.name === 'EURUSD')!;
    const routeId = eur.routes.find((x) => x.type === 'TRADE')!.id;
    const base = { tradableInstrumentId: eur.tradableInstrumentId, qty: '0.01', side: 'buy', type: 'market', routeId, strategyId: 'wire-tag' };
    expect((await send('POST', `/trade/accounts/${login}/orders`, { ...base, validity: 'GTC' })).status).toBe(400);
    const sl = broker.quote('EURUSD').bid.minus('0.01').toFixed();
    const placed = (await (await send('POST', `/trade/accounts/${login}/orders`, { ...base, validity: 'IOC', stopLoss: sl, stopLossType: 'absolute' })).json()) as {
      s: string;
      d: { orderId: string };
    };
    expect(placed.s).toBe('ok');
    expect(typeof placed.d.orderId).toBe('string');
    expect(BigInt(placed.d.orderId) > 2n ** 53n).toBe(true);

    const cfg = (await (await get('/trade/config', { accNum: '1' })).json()) as { d: { positionsConfig: { columns: { id: string }[] } } };
    const col = (id: string) => cfg.d.positionsConfig.columns.findIndex((c) => c.id === id);
    const rows = ((await (await get(`/trade/accounts/${login}/positions`, { accNum: '1' })).json()) as { d: { positions: (string | null)[][] } }).d.positions;
    expect(rows).toHaveLength(1);
    expect(rows[0]![col('strategyId')]).toBe('wire-tag');
    const slId = rows[0]![col('stopLossId')];
    const orders = ((await (await get(`/trade/accounts/${login}/orders`, { accNum: '1' })).json()) as { d: { orders: (string | null)[][] } }).d.orders;
    expect(orders.some((r) => r.includes(slId!))).toBe(true);
  });

  it('a business rejection is HTTP 200 with s:"error"; closing an unknown position is 404', async () => {
    const eur = broker.instrument('EURUSD')!;
    const r = await send('POST', `/trade/accounts/${login}/orders`, {
      tradableInstrumentId: eur.numericId,
      qty: '0.015',
      side: 'buy',
      type: 'market',
      validity: 'IOC',
      routeId: eur.numericId * 100 + 1,
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ s: 'error', errmsg: expect.stringContaining('INVALID_VOLUME') });
    expect((await send('DELETE', '/trade/positions/7200000000000009999', { qty: 0 })).status).toBe(404);
  });

  it('timeout_after_apply holds the answer and lets go of the socket after delayMs', async () => {
    const acc = broker.accounts()[0]!;
    broker.faults.inject({ op: 'read', kind: 'timeout_before_apply', delayMs: 100, accountId: acc.id });
    const started = Date.now();
    await expect(get(`/trade/accounts/${login}/positions`, { accNum: '1' })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });
});
