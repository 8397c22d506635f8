import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../broker.js';
import { type MetaApiSimOptions, startMetaApiSimServer } from './server.js';

/** Wire-level checks of the MetaApi front end with plain fetch, independent of the adapter. */

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

const TX = 'A'.repeat(32);

async function setup(opts: MetaApiSimOptions = {}) {
  const broker = new SimBroker({ seed: 4 });
  const acc = broker.createAccount({ balance: 1_000, meta: { server: 'Wire-Demo', password: 'pw', platform: 'mt5' } });
  // Provisioning phases follow this clock only: a test moves time itself, so a busy machine cannot skip a phase.
  const clock = { ms: Date.parse('2026-01-05T10:00:00Z') };
  const advance = (ms: number) => {
    clock.ms += ms;
  };
  const sim = await startMetaApiSimServer(broker, {
    detectionMs: 40,
    deployMs: 10,
    connectMs: 10,
    now: () => clock.ms,
    ...opts,
  });
  stops.push(() => sim.close());
  /** Provisioning paths go to the provisioning host, an account's terminal paths to its region's client-API host. */
  const hostOf = (path: string) =>
    /^\/users\/current\/accounts\/[^/]+\/(?!deploy$|undeploy$|redeploy$)/.test(path)
      ? sim.clientApiUrls['new-york']!
      : sim.baseUrl;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(hostOf(path) + path, {
      method,
      headers: { 'auth-token': sim.token, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
    };
  };
  const newAccount = { name: 'n', server: 'Wire-Demo', login: acc.login, password: 'pw', platform: 'mt5', magic: 7 };
  return { broker, acc, sim, call, newAccount, clock, advance };
}

async function connected(t: Awaited<ReturnType<typeof setup>>): Promise<string> {
  expect((await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX })).status).toBe(202);
  t.advance(40);
  const r = await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX });
  const id = r.body!.id as string;
  await t.call('POST', `/users/current/accounts/${id}/deploy`);
  t.advance(20);
  return id;
}

describe('MetaApi simulator front end', () => {
  it('requires the auth-token header and answers 401 with the MetaApi error body', async () => {
    const { sim } = await setup();
    const res = await fetch(`${sim.baseUrl}/users/current/accounts`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ id: 2, error: 'UnauthorizedError', message: expect.any(String) });
  });

  it('creates through 202 + Retry-After + recommendedRetryTime, idempotent on the transaction-id', async () => {
    const t = await setup();
    const first = await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX });
    expect(first.status).toBe(202);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(Date.parse((first.body!.metadata as { recommendedRetryTime: string }).recommendedRetryTime)).toBe(
      t.clock.ms + 40,
    );
    t.advance(39);
    expect((await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX })).status).toBe(202);
    t.advance(1);
    const done = await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX });
    expect(done).toMatchObject({ status: 201, body: { state: 'UNDEPLOYED' } });
    const again = await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX });
    expect(again.body!.id).toBe(done.body!.id);
    expect(t.sim.accounts()).toHaveLength(1);
    expect((await t.call('POST', '/users/current/accounts', t.newAccount)).status).toBe(400);
  });

  it('walks DEPLOYING -> DEPLOYED/DISCONNECTED -> CONNECTED, and the client API answers 404 until then', async () => {
    const t = await setup({ detectionMs: 0, deployMs: 40, connectMs: 40 });
    const id = (await t.call('POST', '/users/current/accounts', t.newAccount, { 'transaction-id': TX })).body!
      .id as string;
    expect((await t.call('GET', `/users/current/accounts/${id}/positions`)).status).toBe(404);
    expect((await t.call('POST', `/users/current/accounts/${id}/deploy`)).status).toBe(204);
    expect((await t.call('GET', `/users/current/accounts/${id}`)).body).toMatchObject({
      _id: id,
      state: 'DEPLOYING',
      connectionStatus: 'DISCONNECTED',
      version: 5,
    });
    t.advance(39);
    expect((await t.call('GET', `/users/current/accounts/${id}`)).body).toMatchObject({ state: 'DEPLOYING' });
    t.advance(1);
    expect((await t.call('GET', `/users/current/accounts/${id}`)).body).toMatchObject({
      state: 'DEPLOYED',
      connectionStatus: 'DISCONNECTED',
    });
    expect((await t.call('GET', `/users/current/accounts/${id}/positions`)).status).toBe(404);
    t.advance(40);
    expect((await t.call('GET', `/users/current/accounts/${id}`)).body).toMatchObject({
      state: 'DEPLOYED',
      connectionStatus: 'CONNECTED',
    });
    expect((await t.call('GET', `/users/current/accounts/${id}/positions`)).status).toBe(200);
    expect((await t.call('POST', `/users/current/accounts/${id}/undeploy`)).status).toBe(204);
    expect((await t.call('DELETE', `/users/current/accounts/${id}`)).status).toBe(204);
    expect((await t.call('GET', `/users/current/accounts/${id}`)).status).toBe(404);
  });

  it('enforces the 26-character comment + clientId rule on trades', async () => {
    const t = await setup();
    const id = await connected(t);
    const tooLong = await t.call('POST', `/users/current/accounts/${id}/trade`, {
      actionType: 'ORDER_TYPE_BUY',
      symbol: 'EURUSD',
      volume: 0.1,
      clientId: 'c'.repeat(18),
      comment: 'x'.repeat(9),
    });
    expect(tooLong).toMatchObject({ status: 400, body: { error: 'ValidationError' } });
    const ok = await t.call('POST', `/users/current/accounts/${id}/trade`, {
      actionType: 'ORDER_TYPE_BUY',
      symbol: 'EURUSD',
      volume: 0.1,
      clientId: 'c'.repeat(18),
      comment: 'x'.repeat(8),
    });
    expect(ok.body).toMatchObject({
      numericCode: 10009,
      stringCode: 'TRADE_RETCODE_DONE',
      orderId: expect.stringMatching(/^\d{19}$/),
      positionId: expect.stringMatching(/^\d{19}$/),
    });
    const [pos] = (await t.call('GET', `/users/current/accounts/${id}/positions`)).body as unknown as Record<
      string,
      unknown
    >[];
    expect(pos).toMatchObject({
      clientId: 'c'.repeat(18),
      comment: 'x'.repeat(8),
      type: 'POSITION_TYPE_BUY',
      volume: 0.1,
      magic: 7,
    });
  });

  it('serves deals and history orders by time range (start inclusive, end exclusive) with offset/limit', async () => {
    const t = await setup();
    const id = await connected(t);
    const from = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 3; i++)
      await t.call('POST', `/users/current/accounts/${id}/trade`, {
        actionType: 'ORDER_TYPE_SELL',
        symbol: 'EURUSD',
        volume: 0.01,
        clientId: `t${i}`,
      });
    const to = new Date(Date.now() + 1000).toISOString();
    const deals = (
      await t.call('GET', `/users/current/accounts/${id}/history-deals/time/${from}/${to}?offset=1&limit=1`)
    ).body as unknown as Record<string, unknown>[];
    expect(deals).toHaveLength(1);
    expect(deals[0]).toMatchObject({ clientId: 't1', type: 'DEAL_TYPE_SELL', entryType: 'DEAL_ENTRY_IN' });
    const orders = (await t.call('GET', `/users/current/accounts/${id}/history-orders/time/${from}/${to}`))
      .body as unknown as Record<string, unknown>[];
    expect(orders.map((o) => o.state)).toEqual(['ORDER_STATE_FILLED', 'ORDER_STATE_FILLED', 'ORDER_STATE_FILLED']);
    expect((await t.call('GET', `/users/current/accounts/${id}/history-orders/time/${to}/${to}`)).body).toEqual([]);
    expect((await t.call('GET', `/users/current/accounts/${id}/history-deals/time/nope/${to}`)).status).toBe(400);
  });

  it('answers 429 with Retry-After and metadata.recommendedRetryTime on a rate_limit fault', async () => {
    const t = await setup();
    const id = await connected(t);
    t.broker.faults.inject({ op: 'read', kind: 'rate_limit', retryAfterSec: 5, accountId: t.acc.id });
    const r = await t.call('GET', `/users/current/accounts/${id}/account-information`);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.body).toMatchObject({
      error: 'TooManyRequestsError',
      metadata: { recommendedRetryTime: new Date(t.clock.ms + 5000).toISOString(), periodInSeconds: 1 },
    });
    expect((await t.call('GET', `/users/current/accounts/${id}/account-information`)).body).toMatchObject({
      platform: 'mt5',
      login: Number(t.acc.login),
      balance: 1000,
    });
  });

  it('serves symbol specifications and 404 for unknown symbols', async () => {
    const t = await setup();
    const id = await connected(t);
    expect((await t.call('GET', `/users/current/accounts/${id}/symbols/XAUUSD/specification`)).body).toMatchObject({
      symbol: 'XAUUSD',
      tickSize: 0.01,
      contractSize: 100,
      digits: 2,
    });
    expect((await t.call('GET', `/users/current/accounts/${id}/symbols/NOPE/specification`)).status).toBe(404);
  });
});
