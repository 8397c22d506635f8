import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import { SimBroker } from '../../simulator/broker.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from '../../simulator/tradelocker/server.js';
import type { BrokerEvent } from '../adapter.js';
import { TradeLockerAdapter } from './adapter.js';
import { discoverTradeLockerAccounts, verifyTradeLockerAccount } from './connect.js';
import { createTradeLockerAdapterFactory } from './factory.js';

const META = { email: 'a@example.com', password: 'pw', server: 'S1', environment: 'live' };

describe('TradeLocker connect flow, factory and polling watcher', () => {
  let broker: SimBroker;
  let srv: TradeLockerSimServer;

  beforeAll(async () => {
    broker = new SimBroker({ seed: 9 });
    broker.createAccount({ balance: 1000, meta: META });
    broker.createAccount({ balance: 2500, currency: 'EUR', meta: META });
    srv = await startTradeLockerSimServer(broker);
  });
  afterAll(() => srv.close());

  it('discovers every account of the user and verifies the picked number', async () => {
    const accounts = await discoverTradeLockerAccounts({
      baseUrl: srv.baseUrl,
      email: META.email,
      password: META.password,
      server: META.server,
    });
    expect(accounts.map((a) => [a.accNum, a.currency, a.balance.toString()])).toEqual([
      [1, 'USD', '1000'],
      [2, 'EUR', '2500'],
    ]);
    const second = accounts[1]!;
    expect(
      verifyTradeLockerAccount(accounts, { accountId: second.id, accountNumber: ` #${second.accountNumber} ` }),
    ).toBe(second);
    expect(() =>
      verifyTradeLockerAccount(accounts, { accountId: second.id, accountNumber: accounts[0]!.accountNumber }),
    ).toThrow(/does not match/);
    expect(() => verifyTradeLockerAccount(accounts, { accountId: '1', accountNumber: '1' })).toThrow(AppError);
  });

  it("reports bad credentials as broker_auth_failed (not the caller's credential) without echoing them", async () => {
    const err = await discoverTradeLockerAccounts({
      baseUrl: srv.baseUrl,
      email: META.email,
      password: 'wrong-secret',
      server: META.server,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'broker_auth_failed' });
    expect(String((err as Error).message)).not.toContain('wrong-secret');
  });

  it('the factory validates stored credentials and picks the base URL by environment', async () => {
    const seen: (string | null)[] = [];
    const factory = createTradeLockerAdapterFactory({
      resolveBaseUrl: (env) => (seen.push(env), srv.baseUrl),
      timeoutMs: 500,
    });
    await expect(
      factory.create({ id: 'acc_x', brokerAccountId: '', environment: 'live', credentials: { email: 'x' } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    const acc = broker.accounts()[1]!;
    const adapter = await factory.create({
      id: 'acc_y',
      brokerAccountId: acc.login,
      environment: 'live',
      credentials: { email: META.email, password: META.password, server: META.server, accNum: '2' },
    });
    expect(seen).toEqual(['live']);
    expect(await adapter.accountInfo()).toMatchObject({ currency: 'EUR', brokerAccountNumber: acc.login });
    await adapter.close();
  });

  it('reports the order-write rate its pacer allows from the served PLACE_ORDER limit (admission control plans with it)', async () => {
    const acc = broker.accounts()[1]!;
    const adapter = new TradeLockerAdapter({ baseUrl: srv.baseUrl, ...META, accountId: acc.login, accNum: 2 });
    expect(adapter.writeRatePerSecond()).toBeNull(); // nothing served yet: the caller falls back to capabilities
    await adapter.connect();
    // The simulator serves 20 per second; the pacer keeps 60 % of it steady (pacer.ts): 12/s, 84 ms apart.
    expect(adapter.writeRatePerSecond()).toBeCloseTo(1000 / 84, 5);
    await adapter.close();
  });

  it('subscribe polls and diffs: opened, modified, reduced, closed, pending placed / cancelled / filled', async () => {
    const acc = broker.accounts()[0]!;
    // The baseline poll reads positions, then pending orders: once an orders read is answered, the baseline is
    // taken, and whatever the broker does next is a change.
    let ordersAnswered = 0;
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (new URL(String(input)).pathname.endsWith('/orders')) ordersAnswered++;
      return res;
    };
    const adapter = new TradeLockerAdapter({
      baseUrl: srv.baseUrl,
      ...META,
      accountId: acc.login,
      accNum: 1,
      timeoutMs: 500,
      pollIntervalMs: 50,
      fetch: counting,
    });
    const events: BrokerEvent[] = [];
    const off = adapter.subscribe((ev) => events.push(ev));
    const waitFor = async (kind: BrokerEvent['kind']) => {
      for (let i = 0; i < 100 && !events.some((e) => e.kind === kind); i++) await new Promise((r) => setTimeout(r, 20));
      const ev = events.find((e) => e.kind === kind);
      expect(ev, `no ${kind} event in ${events.map((e) => e.kind).join(',')}`).toBeDefined();
      return ev!;
    };
    await vi.waitFor(() => expect(ordersAnswered).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    broker.setPrice('EURUSD', '1.08000');
    const opened = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.3'),
      tag: 'w1',
    });
    expect((await waitFor('position_opened')).position?.id).toBe(opened.position!.id);
    broker.modifyPosition(acc.id, opened.position!.id, { stopLoss: dec('1.07'), takeProfit: null });
    expect((await waitFor('position_modified')).position?.stopLoss?.toString()).toBe('1.07');
    broker.closePosition(acc.id, opened.position!.id, dec('0.1'));
    expect((await waitFor('position_reduced')).closedVolume?.toString()).toBe('0.1');
    broker.closePosition(acc.id, opened.position!.id);
    await waitFor('position_closed');

    const limit = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.1'),
      price: dec('1.07'),
      tag: 'w2',
    });
    expect((await waitFor('order_placed')).order?.id).toBe(limit.order.id);
    broker.cancelOrder(acc.id, limit.order.id);
    expect((await waitFor('order_cancelled')).order?.status).toBe('cancelled');
    const stop = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'stop',
      volume: dec('0.1'),
      price: dec('1.0810'),
      tag: 'w3',
    });
    // A pending order that fills between two polls is only ever seen as its position: wait until it was seen.
    for (let i = 0; i < 100 && !events.some((e) => e.kind === 'order_placed' && e.order?.id === stop.order.id); i++)
      await new Promise((r) => setTimeout(r, 20));
    broker.setPrice('EURUSD', '1.0820');
    const filled = await waitFor('order_filled');
    expect(filled.order).toMatchObject({ id: stop.order.id, status: 'filled' });
    expect(filled.order?.positionId).toMatch(/^\d+$/);
    off();
    await adapter.close();
  });

  it('sends what the official client sends: prices as numbers, ids and qty as strings, 32-character strategyId', async () => {
    const acc = broker.accounts()[0]!;
    const bodies: { method: string; path: string; body: Record<string, unknown> }[] = [];
    const spy: typeof fetch = async (input, init) => {
      if (init?.body && typeof init.body === 'string') {
        bodies.push({
          method: init.method ?? 'GET',
          path: new URL(String(input)).pathname,
          body: JSON.parse(init.body) as Record<string, unknown>,
        });
      }
      return fetch(input, init);
    };
    const adapter = new TradeLockerAdapter({
      baseUrl: srv.baseUrl,
      ...META,
      accountId: acc.login,
      accNum: 1,
      timeoutMs: 2000,
      fetch: spy,
    });
    broker.setPrice('EURUSD', '1.08000');
    const tag = 'w'.repeat(32);
    const placed = await adapter.placeOrder({
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.1'),
      price: dec('1.07250'),
      stopLoss: dec('1.0625'),
      takeProfit: dec('1.0911'),
      tag,
    });
    expect(placed.kind).toBe('confirmed');
    const place = bodies.find((b) => b.method === 'POST' && b.path.endsWith('/orders'))!.body;
    const eur = broker.instrument('EURUSD')!;
    expect(place).toEqual({
      tradableInstrumentId: String(eur.numericId),
      routeId: String(eur.numericId * 100 + 1),
      qty: '0.1',
      side: 'buy',
      type: 'limit',
      validity: 'GTC',
      price: 1.0725,
      stopLoss: 1.0625,
      stopLossType: 'absolute',
      takeProfit: 1.0911,
      takeProfitType: 'absolute',
      strategyId: tag,
    });
    const orderId = placed.kind === 'confirmed' ? placed.brokerOrderId! : '';
    expect(broker.orders(acc.id).find((o) => o.id === orderId)?.tag).toBe(tag);
    expect(await adapter.modifyOrder(orderId, { price: dec('1.0731'), stopLoss: null })).toMatchObject({
      kind: 'confirmed',
    });
    expect(bodies.find((b) => b.method === 'PATCH')!.body).toEqual({ price: 1.0731, stopLoss: null });
    await adapter.cancelOrder(orderId);

    const opened = await adapter.placeOrder({
      symbol: 'EURUSD',
      side: 'sell',
      type: 'market',
      volume: dec('0.1'),
      tag: 'wire-m',
    });
    const positionId = opened.kind === 'confirmed' ? opened.positionId! : '';
    expect(await adapter.modifyPosition(positionId, { stopLoss: dec('1.0912'), takeProfit: null })).toMatchObject({
      kind: 'confirmed',
    });
    expect(bodies.filter((b) => b.method === 'PATCH').at(-1)!.body).toEqual({ stopLoss: 1.0912, takeProfit: null });
    expect(
      broker
        .positions(acc.id)
        .find((p) => p.id === positionId)
        ?.stopLoss?.toString(),
    ).toBe('1.0912');
    await adapter.closePosition(positionId);
    await adapter.close();
  });
});

describe('TradeLocker writes read back only the recent history', () => {
  it('a market open and a close parse a few history rows, not every order of the last five minutes', async () => {
    // The broker's clock a few minutes back while the history is made, then now.
    let skew = 0;
    const broker = new SimBroker({ seed: 11, now: () => new Date(Date.now() - skew) });
    const acc = broker.createAccount({ balance: 1_000_000, meta: META });
    const srv = await startTradeLockerSimServer(broker);
    // A busy account: 120 finished orders within the lookback, one to four minutes ago (a soak Slave makes 30 a minute).
    for (let i = 0; i < 60; i++) {
      skew = 240_000 - i * 3_000;
      const r = broker.placeOrder(acc.id, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: `h${i}`,
      });
      broker.closePosition(acc.id, r.position!.id);
    }
    skew = 0;
    let historyRows = 0;
    const spy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (new URL(String(input)).pathname.endsWith('/ordersHistory')) {
        const body = (await res.clone().json()) as { d?: { ordersHistory?: unknown[] } };
        historyRows += body.d?.ordersHistory?.length ?? 0;
      }
      return res;
    };
    const adapter = new TradeLockerAdapter({
      baseUrl: srv.baseUrl,
      ...META,
      accountId: acc.login,
      accNum: 1,
      fetch: spy,
    });
    try {
      const opened = await adapter.placeOrder({
        symbol: 'EURUSD',
        side: 'sell',
        type: 'market',
        volume: dec('0.1'),
        tag: 'recent-1',
      });
      expect(opened).toMatchObject({ kind: 'confirmed', filledVolume: dec('0.1') });
      const openRows = historyRows;
      const closed = await adapter.closePosition(opened.kind === 'confirmed' ? opened.positionId! : '');
      expect(closed.kind === 'confirmed' && closed.brokerOrderId).toBeTruthy();
      // The order just made, and what else the account made in the same seconds: not the 120 before it.
      expect(openRows).toBeLessThan(10);
      expect(historyRows - openRows).toBeLessThan(10);
      // A broker clock a minute behind ours: the order is outside the near window, the whole lookback finds it.
      skew = 60_000;
      const late = await adapter.placeOrder({
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: 'recent-2',
      });
      expect(late).toMatchObject({ kind: 'confirmed', filledVolume: dec('0.1') });
      expect(late.kind === 'confirmed' && late.positionId).toBeTruthy();
    } finally {
      await adapter.close();
      await srv.close();
    }
  });
});

describe('TradeLocker listDeals over /executions', () => {
  it("derives in/out from the position's side and tags each fill as the simulator's books do", async () => {
    const broker = new SimBroker({ seed: 13 });
    const acc = broker.createAccount({ balance: 100_000, meta: META });
    const srv = await startTradeLockerSimServer(broker, { shuffleColumnsSeed: 77 });
    const adapter = new TradeLockerAdapter({ baseUrl: srv.baseUrl, ...META, accountId: acc.login, accNum: 1 });
    try {
      broker.setPrice('EURUSD', '1.08000');
      // Opened before the window, closed inside it: the close must still read 'out', with the opening tag.
      const early = broker.placeOrder(acc.id, {
        symbol: 'EURUSD',
        side: 'sell',
        type: 'market',
        volume: dec('0.3'),
        tag: 'early-s',
      });
      await new Promise((r) => setTimeout(r, 20));
      const since = new Date();
      broker.closePosition(acc.id, early.position!.id, dec('0.1'));
      const later = broker.placeOrder(acc.id, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.2'),
        tag: 'later-b',
      });
      broker.setPrice('EURUSD', '1.08100');
      broker.closePosition(acc.id, early.position!.id);
      // Still open: its side comes from /positions.
      broker.closePosition(acc.id, later.position!.id, dec('0.1'));

      const booked = broker.deals(acc.id, { from: since });
      const deals = await adapter.listDeals(since);
      expect(deals.map((d) => [d.positionId, d.entry, d.side, d.volume.toString(), d.tag])).toEqual(
        booked.map((d) => [d.positionId, d.entry, d.side, d.volume.toString(), d.tag]),
      );
      expect(deals.map((d) => d.entry)).toEqual(['out', 'in', 'out', 'out']);
      expect(deals.map((d) => d.tag)).toEqual(['early-s', 'later-b', 'early-s', 'later-b']);
      expect(deals.every((d) => d.symbol === 'EURUSD' && d.orderId !== null)).toBe(true);
      const times = deals.map((d) => Date.parse(d.time));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(await adapter.listDeals(new Date(Date.now() + 60_000))).toEqual([]);
    } finally {
      await adapter.close();
      await srv.close();
    }
  });
});
