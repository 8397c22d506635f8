import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { Decimal } from '../../src/domain/decimal.js';

let svc: TestService;
let token: string;
let bAccount: string;
let bAccounts: string[];
let cAccount: string;
let foreignB: string;

beforeAll(async () => {
  svc = await startTestService();
  token = svc.demo!.accessToken;
  const store = svc.deps.store;
  const me = (await store.users.byEmail(svc.demo!.email))!;
  // Platform B and C accounts of the demo user, on the simulated broker's accounts (read through the store).
  const mk = async (userId: string, platform: 'platformb' | 'platformc', n: string) =>
    (
      await store.accounts.create({
        userId,
        platform,
        role: 'slave',
        name: `${platform} ${n}`,
        brokerAccountId: n,
        brokerAccountNumber: n,
        balance: new Decimal(1000),
      })
    ).id;
  bAccounts = (await store.accounts.list(me.id, { platform: 'platformb' })).map((a) => a.id);
  bAccount = bAccounts[0]!;
  cAccount = await mk(me.id, 'platformc', 'C-1');
  const other = await svc.deps.auth.createUser('other@example.test', 'other-password');
  foreignB = await mk(other.id, 'platformb', 'B-2');
});
afterAll(async () => svc?.close());

const ROUTES = [
  '/api/trading-accounts',
  '/api/trading-accounts/ID/capabilities',
  '/api/trading-accounts/ID/positions',
  '/api/trading-accounts/ID/orders',
  '/api/platformc/accounts',
  '/api/platformc/accounts/ID/positions',
];

describe('family R (spec 4R, 5, 7)', () => {
  it('R1/R2: every route requires a signed-in user bearer token; missing or invalid gives 401 with {code, error, requestId}', async () => {
    for (const route of ROUTES) {
      for (const t of [undefined, 'garbage', svc.demo!.apiKey]) {
        const r = await svc.call('GET', route.replace('ID', bAccount), t ? { token: t } : {});
        expect(r.status, `${route} with ${t}`).toBe(401);
        expect(Object.keys(r.body).sort()).toEqual(['code', 'error', 'requestId']);
        expect(r.body.requestId).toBe(r.headers.get('x-request-id'));
      }
    }
  });

  it('R5: GET /api/trading-accounts -> {success: true, data: [platform B accounts of the user]}', async () => {
    const r = await svc.call('GET', '/api/trading-accounts', { token });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data.map((a: any) => a.id)).toEqual(bAccounts);
    expect(bAccounts.length).toBeGreaterThan(0);
    for (const a of r.body.data)
      expect(a).toMatchObject({
        platform: 'platformb',
        role: expect.stringMatching(/^(master|slave)$/),
        status: 'connected',
      });
  });

  it("R9: GET /api/platformc/accounts lists only the user's platform C accounts", async () => {
    const r = await svc.call('GET', '/api/platformc/accounts', { token });
    expect(r.status).toBe(200);
    const mine = (
      await svc.deps.store.accounts.list((await svc.deps.store.users.byEmail(svc.demo!.email))!.id, {
        platform: 'platformc',
      })
    ).map((a) => a.id);
    expect(r.body.data.map((a: any) => a.id)).toEqual(mine);
    expect(mine).toContain(cAccount);
    expect(r.body.data.every((a: any) => a.platform === 'platformc')).toBe(true);
  });

  it('R10: positions of an owned platform C account, read over the cTrader protocol', async () => {
    const real = (await svc.call('GET', '/api/platformc/accounts', { token })).body.data.find(
      (a: any) => a.id !== cAccount,
    );
    const r = await svc.call('GET', `/api/platformc/accounts/${real.id}/positions`, { token });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(Array.isArray(r.body.data)).toBe(true);
  });

  it('R3/R4: a foreign id, an unknown id and an id of another platform give the same 404', async () => {
    const bodies = [];
    for (const id of [foreignB, 'acc_doesnotexist', cAccount]) {
      for (const route of ROUTES.filter((r) => r.includes('/trading-accounts/'))) {
        const r = await svc.call('GET', route.replace('ID', id), { token });
        expect(r.status, `${route} ${id}`).toBe(404);
        bodies.push({ code: r.body.code, error: r.body.error });
      }
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    const c = await svc.call('GET', `/api/platformc/accounts/${bAccount}/positions`, { token });
    expect(c.status).toBe(404);
  });

  it('R6: capabilities of the account adapter', async () => {
    const r = await svc.call('GET', `/api/trading-accounts/${bAccount}/capabilities`, { token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: {
        platform: 'platformb',
        correlationTag: { field: 'strategyId', maxLength: 32 },
        has: { marketOrders: true },
      },
    });
  });

  it('R7/R8: positions and orders of a platform B account, read through the TradeLocker protocol', async () => {
    const key = svc.demo!.apiKey;
    const master = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.find(
      (a: any) => a.role === 'master',
    ).id;
    const sent = await svc.call('POST', `/v1/accounts/${master}/orders`, {
      token: key,
      body: { symbol: 'EURUSD', side: 'buy', volume: 0.1 },
    });
    expect(sent.status).toBe(202);
    await expect
      .poll(
        async () => (await svc.call('GET', `/api/trading-accounts/${bAccount}/positions`, { token })).body.data.length,
        { timeout: 15_000 },
      )
      .toBe(1);
    const pos = (await svc.call('GET', `/api/trading-accounts/${bAccount}/positions`, { token })).body;
    expect(pos).toMatchObject({
      success: true,
      data: [{ symbol: 'EURUSD', side: 'buy', volume: 0.1, id: expect.stringMatching(/^\d+$/) }],
    });
    const orders = await svc.call(
      'GET',
      `/api/trading-accounts/${bAccount}/orders?from=${Date.now() - 60_000}&to=${new Date(Date.now() + 60_000).toISOString()}&instrumentId=EURUSD`,
      { token },
    );
    expect(orders.status).toBe(200);
    expect(orders.body.success).toBe(true);
    expect(orders.body.data.every((o: any) => o.symbol === 'EURUSD')).toBe(true);
  });

  it("R8: instrumentId takes the broker's instrument id (TradeLocker tradableInstrumentId) as well as the symbol", async () => {
    const key = svc.demo!.apiKey;
    const master = (await svc.call('GET', '/v1/accounts', { token: key })).body.accounts.find(
      (a: any) => a.role === 'master',
    ).id;
    expect(
      (
        await svc.call('POST', `/v1/accounts/${master}/orders`, {
          token: key,
          body: { symbol: 'GBPUSD', side: 'buy', volume: 0.1 },
        })
      ).status,
    ).toBe(202);
    await expect
      .poll(
        async () =>
          (await svc.call('GET', `/api/trading-accounts/${bAccount}/orders`, { token })).body.data.map(
            (o: any) => o.symbol,
          ),
        { timeout: 15_000 },
      )
      .toContain('GBPUSD');
    const all = (await svc.call('GET', `/api/trading-accounts/${bAccount}/orders`, { token })).body.data.map(
      (o: any) => o.symbol,
    );
    expect(new Set(all).size).toBeGreaterThan(1); // EURUSD from the test above and GBPUSD: the filter has something to drop
    const tid = svc.broker.instrument('GBPUSD')!.numericId;
    const byId = await svc.call('GET', `/api/trading-accounts/${bAccount}/orders?instrumentId=${tid}`, { token });
    expect(byId.status).toBe(200);
    expect(byId.body.data.length).toBeGreaterThan(0);
    expect(byId.body.data.every((o: any) => o.symbol === 'GBPUSD')).toBe(true);
    const bySymbol = await svc.call('GET', `/api/trading-accounts/${bAccount}/orders?instrumentId=GBPUSD`, { token });
    expect(bySymbol.body.data.map((o: any) => o.id)).toEqual(byId.body.data.map((o: any) => o.id));
    const unknown = await svc.call('GET', `/api/trading-accounts/${bAccount}/orders?instrumentId=987654`, { token });
    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toEqual([]);
  });

  it('R8: orders accepts from/to/instrumentId and refuses malformed values with 400', async () => {
    const bad = await svc.call('GET', `/api/trading-accounts/${bAccount}/orders?from=yesterday`, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('from');
    const inverted = await svc.call(
      'GET',
      `/api/trading-accounts/${bAccount}/orders?from=2026-10-02T00:00:00Z&to=2026-10-01T00:00:00Z`,
      { token },
    );
    expect(inverted.status).toBe(400);
    const unknownParam = await svc.call('GET', `/api/trading-accounts/${bAccount}/orders?foo=1`, { token });
    expect(unknownParam.status).toBe(400);
  });

  it('R15: the OpenAPI document states the family R reference revision date', async () => {
    const doc = (await svc.call('GET', '/openapi.json')).body;
    expect(doc.info.description).toContain('2 October 2026');
    expect(doc.paths['/api/trading-accounts'].get.operationId).toBe('listTradingAccounts');
  });
});
