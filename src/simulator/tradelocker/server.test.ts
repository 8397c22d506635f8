import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { SimBroker } from '../broker.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from './server.js';

/** The wire itself, checked with plain fetch: what a third-party TradeLocker client would see. */

const META = { email: 'Wire@Example.com', password: 'pw', server: 'WIRE', environment: 'demo' };

describe('TradeLocker simulator front end (wire)', () => {
  let broker: SimBroker;
  let srv: TradeLockerSimServer;
  let token: string;
  let login: string;

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${srv.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const send = (method: string, path: string, body: unknown) =>
    fetch(`${srv.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, accNum: '1', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    broker = new SimBroker({ seed: 5 });
    login = broker.createAccount({ balance: 1000, meta: META }).login;
    broker.createAccount({ balance: 2000, meta: { ...META, environment: 'live' } });
    broker.createAccount({ balance: 3000, meta: { ...META, email: 'other@example.com' } });
    srv = await startTradeLockerSimServer(broker, { environment: 'demo' });
  });
  afterAll(() => srv.close());

  it('signs in with HTTP 201 and a JWT; a wrong password is refused', async () => {
    const bad = await fetch(`${srv.baseUrl}/auth/jwt/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...META, password: 'x' }),
    });
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
    const refreshed = await fetch(`${srv.baseUrl}/auth/jwt/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: body.refreshToken }),
    });
    expect(refreshed.status).toBe(201);
  });

  it('all-accounts lists only this user on this environment, numbers as strings', async () => {
    const r = await get('/auth/jwt/all-accounts');
    const body = (await r.json()) as { accounts: { id: string; accNum: string; accountBalance: string }[] };
    expect(body.accounts).toEqual([
      expect.objectContaining({ id: login, accNum: '1', accountBalance: '1000.00', currency: 'USD' }),
    ]);
  });

  it('requires the accNum header on /trade routes and a matching accountId', async () => {
    expect((await get(`/trade/accounts/${login}/positions`)).status).toBe(400);
    expect((await get('/trade/accounts/999/positions', { accNum: '1' })).status).toBe(403);
    expect((await get(`/trade/accounts/${login}/positions`, { accNum: '1' })).status).toBe(200);
    expect((await fetch(`${srv.baseUrl}/trade/config`, { headers: { accNum: '1' } })).status).toBe(401);
  });

  it('serves column maps and all 18 rate-limit route types', async () => {
    const body = (await (await get('/trade/config', { accNum: '1' })).json()) as {
      s: string;
      d: Record<string, { columns?: unknown[] }> & { rateLimits: unknown[] };
    };
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
    const base = {
      tradableInstrumentId: eur.tradableInstrumentId,
      qty: '0.01',
      side: 'buy',
      type: 'market',
      routeId,
      strategyId: 'wire-tag',
    };
    expect((await send('POST', `/trade/accounts/${login}/orders`, { ...base, validity: 'GTC' })).status).toBe(400);
    const sl = broker.quote('EURUSD').bid.minus('0.01').toFixed();
    const placed = (await (
      await send('POST', `/trade/accounts/${login}/orders`, {
        ...base,
        validity: 'IOC',
        stopLoss: sl,
        stopLossType: 'absolute',
      })
    ).json()) as {
      s: string;
      d: { orderId: string };
    };
    expect(placed.s).toBe('ok');
    expect(typeof placed.d.orderId).toBe('string');
    expect(BigInt(placed.d.orderId) > 2n ** 53n).toBe(true);

    const cfg = (await (await get('/trade/config', { accNum: '1' })).json()) as {
      d: { positionsConfig: { columns: { id: string }[] } };
    };
    const col = (id: string) => cfg.d.positionsConfig.columns.findIndex((c) => c.id === id);
    const rows = (
      (await (await get(`/trade/accounts/${login}/positions`, { accNum: '1' })).json()) as {
        d: { positions: (string | null)[][] };
      }
    ).d.positions;
    expect(rows).toHaveLength(1);
    expect(rows[0]![col('strategyId')]).toBe('wire-tag');
    const slId = rows[0]![col('stopLossId')];
    const orders = (
      (await (await get(`/trade/accounts/${login}/orders`, { accNum: '1' })).json()) as {
        d: { orders: (string | null)[][] };
      }
    ).d.orders;
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

  it('deleting an order that has filled is HTTP 200 with s:"error", as the official client expects; an unknown id is 404', async () => {
    const acc = broker.accounts()[0]!;
    const buyStop = (price: string) =>
      broker.placeOrder(acc.id, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'stop',
        volume: dec('0.01'),
        price: dec(price),
        tag: 'del',
      }).order.id;
    const del = async (id: string) => {
      const r = await send('DELETE', `/trade/orders/${id}`, {});
      return { status: r.status, body: await r.json() };
    };
    broker.setPrice('EURUSD', '1.08000');
    const filled = buyStop('1.081');
    broker.setPrice('EURUSD', '1.0820'); // the stop triggers
    expect(broker.order(acc.id, filled)?.status).toBe('filled');
    expect(await del(filled)).toEqual({ status: 200, body: { s: 'error', errmsg: `Order ${filled} is Filled` } });
    expect(broker.order(acc.id, filled)?.status).toBe('filled');

    const pending = buyStop('1.0850');
    expect(await del(pending)).toEqual({ status: 200, body: { s: 'ok' } });
    expect(await del(pending)).toEqual({ status: 200, body: { s: 'error', errmsg: `Order ${pending} is Cancelled` } });
    expect((await del('7300000000000009999')).status).toBe(404);
  });

  it('timeout_after_apply holds the answer and lets go of the socket after delayMs', async () => {
    const acc = broker.accounts()[0]!;
    broker.faults.inject({ op: 'read', kind: 'timeout_before_apply', delayMs: 100, accountId: acc.id });
    const started = Date.now();
    await expect(get(`/trade/accounts/${login}/positions`, { accNum: '1' })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  describe('as the official client speaks it', () => {
    const eur = () => broker.instrument('EURUSD')!;
    // What tradelocker-python sends: ids as strings, prices as numbers, qty as a string.
    const order = (extra: Record<string, unknown>) => ({
      tradableInstrumentId: String(eur().numericId),
      routeId: String(eur().numericId * 100 + 1),
      qty: '0.01',
      side: 'buy',
      type: 'market',
      validity: 'IOC',
      ...extra,
    });
    const place = async (extra: Record<string, unknown>) =>
      (await (await send('POST', `/trade/accounts/${login}/orders`, order(extra))).json()) as {
        s: string;
        d?: { orderId: string };
        errmsg?: string;
      };
    const acct = () => broker.accounts()[0]!.id;
    const pip = dec('0.0001');

    it('fills a marketable sell limit at once at the bid, as real servers do', async () => {
      broker.setPrice('EURUSD', '1.08000');
      const bid = broker.quote('EURUSD').bid;
      const placed = await place({ side: 'sell', type: 'limit', validity: 'GTC', price: 1.07, strategyId: 'mk-limit' });
      expect(placed).toMatchObject({ s: 'ok', d: { orderId: expect.any(String) } });
      const pos = broker.positions(acct()).find((p) => p.tag === 'mk-limit');
      expect(pos?.openPrice.toString()).toBe(bid.toString());
      const o = broker.orders(acct(), { includeHistory: true }).find((x) => x.id === placed.d!.orderId);
      expect(o).toMatchObject({ type: 'limit', status: 'filled', positionId: pos!.id });
    });

    it('takes stopLossType/takeProfitType offset (pips from the fill) and trailingOffset (fixed at placement)', async () => {
      broker.setPrice('EURUSD', '1.08000');
      const { ask } = broker.quote('EURUSD');
      expect(
        await place({
          stopLoss: 20,
          stopLossType: 'offset',
          takeProfit: 35,
          takeProfitType: 'offset',
          strategyId: 'off-1',
        }),
      ).toMatchObject({ s: 'ok' });
      const p1 = broker.positions(acct()).find((p) => p.tag === 'off-1')!;
      expect(p1.stopLoss?.toString()).toBe(ask.minus(pip.mul(20)).toString());
      expect(p1.takeProfit?.toString()).toBe(ask.plus(pip.mul(35)).toString());
      // A sell limit resting above the market: offsets count from its price.
      expect(
        await place({
          side: 'sell',
          type: 'limit',
          validity: 'GTC',
          price: 1.09,
          stopLoss: 10,
          stopLossType: 'offset',
          strategyId: 'off-2',
        }),
      ).toMatchObject({ s: 'ok' });
      expect(
        broker
          .orders(acct())
          .find((o) => o.tag === 'off-2')
          ?.stopLoss?.toString(),
      ).toBe('1.091');
      expect(
        await place({ stopLoss: 15, stopLossType: 'trailingOffset', trStopOffset: 15, strategyId: 'trail-1' }),
      ).toMatchObject({ s: 'ok' });
      const p3 = broker.positions(acct()).find((p) => p.tag === 'trail-1')!;
      expect(p3.stopLoss?.toString()).toBe(p3.openPrice.minus(pip.mul(15)).toString());
      const bad = await send(
        'POST',
        `/trade/accounts/${login}/orders`,
        order({ takeProfit: 10, takeProfitType: 'trailingOffset' }),
      );
      expect(bad.status).toBe(400);
      const missingType = await send('POST', `/trade/accounts/${login}/orders`, order({ stopLoss: 1.07 }));
      expect(missingType.status).toBe(400);
    });

    it('accepts a 32-character strategyId and refuses 33', async () => {
      const ok = await place({ strategyId: 'a'.repeat(32) });
      expect(ok).toMatchObject({ s: 'ok' });
      expect(broker.positions(acct()).some((p) => p.tag === 'a'.repeat(32))).toBe(true);
      const r = await send('POST', `/trade/accounts/${login}/orders`, order({ strategyId: 'b'.repeat(33) }));
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ s: 'error', errmsg: expect.stringContaining('strategyId') });
      expect(broker.orders(acct(), { includeHistory: true }).some((o) => o.tag === 'b'.repeat(33))).toBe(false);
    });

    describe('the market-data and session routes /trade/config advertises', () => {
      const info = () => ({
        tradableInstrumentId: String(eur().numericId),
        routeId: String(eur().numericId * 100 + 2),
      });
      const q = (extra: Record<string, string>) => new URLSearchParams({ ...info(), ...extra }).toString();
      const json = async (path: string) => {
        const r = await get(path, { accNum: '1' });
        return { status: r.status, body: (await r.json()) as { s: string; d: any; errmsg?: string } };
      };

      it('dailyBar: o/h/l/c/v of today from the simulated market, by barType', async () => {
        broker.setPrice('EURUSD', '1.08000');
        await json(`/trade/quotes?${q({})}`);
        broker.setPrice('EURUSD', '1.08100');
        await json(`/trade/quotes?${q({})}`);
        const bid = await json(`/trade/dailyBar?${q({ barType: 'BID' })}`);
        expect(bid.status).toBe(200);
        expect(bid.body.s).toBe('ok');
        const now = broker.quote('EURUSD');
        expect(bid.body.d).toMatchObject({ c: now.bid.toNumber() });
        expect(bid.body.d.h).toBeGreaterThanOrEqual(now.bid.toNumber());
        expect(bid.body.d.l).toBeLessThanOrEqual(dec('1.08').toNumber());
        expect(bid.body.d.v).toBeGreaterThan(0);
        expect((await json(`/trade/dailyBar?${q({ barType: 'ASK' })}`)).body.d.c).toBe(now.ask.toNumber());
        expect((await json(`/trade/dailyBar?${q({ barType: 'NOPE' })}`)).status).toBe(400);
      });

      it('depth: one level each side at the simulated quote', async () => {
        const r = await json(`/trade/depth?${q({})}`);
        const quote = broker.quote('EURUSD');
        expect(r.body).toMatchObject({
          s: 'ok',
          d: { asks: [[quote.ask.toNumber(), expect.any(Number)]], bids: [[quote.bid.toNumber(), expect.any(Number)]] },
        });
      });

      it('history: bars of the requested resolution within from/to, no_data when empty', async () => {
        const to = Date.now() + 60_000;
        const from = to - 3_600_000;
        broker.setPrice('EURUSD', '1.08200');
        const r = await json(`/trade/history?${q({ resolution: '1m', from: String(from), to: String(to) })}`);
        expect(r.body.s).toBe('ok');
        const bars = r.body.d.barDetails as { t: number; o: number; h: number; l: number; c: number; v: number }[];
        expect(bars.length).toBeGreaterThan(0);
        for (const b of bars) {
          expect(b.t % 60_000).toBe(0);
          expect(b.t).toBeGreaterThanOrEqual(from - 60_000);
          expect(b.h).toBeGreaterThanOrEqual(Math.max(b.o, b.c));
          expect(b.l).toBeLessThanOrEqual(Math.min(b.o, b.c));
        }
        expect(bars.at(-1)!.c).toBe(broker.quote('EURUSD').bid.toNumber());
        expect((await json(`/trade/history?${q({ resolution: '1m', from: '1000', to: '2000' })}`)).body.s).toBe(
          'no_data',
        );
        expect(
          (await json(`/trade/history?${q({ resolution: '7m', from: String(from), to: String(to) })}`)).status,
        ).toBe(400);
        // More bars than /trade/config limits.QUOTES_HISTORY_BARS allows in one request.
        expect((await json(`/trade/history?${q({ resolution: '1m', from: '0', to: String(to) })}`)).status).toBe(400);
      });

      it('sessions and session statuses: the simulated market is always open', async () => {
        const details = await json(`/trade/instruments/${eur().numericId}?routeId=${eur().numericId * 100 + 2}`);
        const session = await json(`/trade/sessions/${details.body.d.tradeSessionId}`);
        expect(session.status).toBe(200);
        expect(session.body.d).toMatchObject({ holidays: [], schedule: expect.any(Array) });
        const status = await json(`/trade/sessionStatuses/${details.body.d.tradeSessionStatusId}`);
        expect(status.body.d).toEqual({ allowedOperations: [1, 1, 1], allowedOrderTypes: [1, 1, 1, 1, 1, 1] });
        expect((await json('/trade/sessions/999')).status).toBe(404);
        expect((await json('/trade/sessionStatuses/999')).status).toBe(404);
      });
    });
  });
});
