import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerAdapter, PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { CTraderConnection } from '../../src/platforms/ctrader/connection.js';
import { NotSentError, OpenApiError } from '../../src/platforms/ctrader/errors.js';
import { createCTraderAdapterFactory, type CTraderAdapterFactory } from '../../src/platforms/ctrader/factory.js';
import { PT } from '../../src/protocols/ctrader/payload-types.js';
import type { CTraderTokens } from '../../src/platforms/ctrader/tokens.js';
import { SimBroker } from '../../src/simulator/broker.js';
import {
  startCTraderSimServer,
  type CTraderSimServer,
  type CTraderSimServerOptions,
} from '../../src/simulator/ctrader/server.js';
import { appError } from '../helpers/app-error.js';

/**
 * Every injected fault through the real wire: what the adapter reports, and that the simulator's book shows
 * nothing duplicated or lost. Short timeouts, loopback only, everything torn down after each test.
 */

interface World {
  broker: SimBroker;
  server: CTraderSimServer;
  factory: CTraderAdapterFactory;
  adapter: BrokerAdapter;
  simAccountId: string;
  refreshed: CTraderTokens[];
  tokens: CTraderTokens;
}

const worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.adapter.close();
    await w.factory.closeAll();
    await w.server.close();
  }
});

async function world(serverOpts: CTraderSimServerOptions = {}): Promise<World> {
  const broker = new SimBroker({ seed: 3 });
  const acc = broker.createAccount({ balance: 10_000, meta: { ctidUserId: 'u1', environment: 'demo' } });
  broker.setPrice('EURUSD', '1.08000');
  const server = await startCTraderSimServer(broker, { heartbeatMs: 200, ...serverOpts });
  const tokens = server.issueTokenFor('u1');
  const refreshed: CTraderTokens[] = [];
  const factory = createCTraderAdapterFactory({
    resolveEndpoint: () => ({ ...server.endpoints.demo, ca: server.ca }),
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    oauthBaseUrl: server.oauthBaseUrl,
    timeoutMs: 400,
    heartbeatMs: 100,
    deadAfterMs: 1_000,
    backoff: { initialMs: 40, maxMs: 400 },
    onTokensRefreshed: async (_id, t) => {
      refreshed.push(t);
    },
  });
  const ctid = server.ctidTraderAccountIdOf(acc.id);
  const adapter = await factory.create({
    id: 'acc_f',
    brokerAccountId: ctid,
    environment: 'demo',
    credentials: { ...tokens, ctidTraderAccountId: ctid },
  });
  // Warm up symbols so a later fault is consumed by the request under test, not by a first-use lookup.
  await adapter.instrument('EURUSD');
  const w = { broker, server, factory, adapter, simAccountId: acc.id, refreshed, tokens };
  worlds.push(w);
  return w;
}

let seq = 0;
const tag = () => `flt${Date.now().toString(36)}${++seq}`;
const buy = (t: string, withStops = false): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('0.10'),
  tag: t,
  ...(withStops ? { stopLoss: dec('1.07500'), takeProfit: dec('1.08500') } : {}),
});
const tagged = (w: World, t: string) => w.broker.positions(w.simAccountId).filter((p) => p.tag === t);

describe('cTrader faults over the wire', () => {
  it('BLOCKED_PAYLOAD_TYPE: reads throw rate_limited with retryAfter, writes are rejected as rate_limited', async () => {
    const w = await world();
    w.broker.faults.inject({ op: 'read', kind: 'rate_limit', retryAfterSec: 3, accountId: w.simAccountId });
    const err = await appError(w.adapter.accountInfo());
    expect(err.code).toBe('rate_limited');
    expect(err.retryAfter).toBe(3);

    const t = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 2, accountId: w.simAccountId });
    const out = await w.adapter.placeOrder(buy(t));
    expect(out).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      raw: { errorCode: 'BLOCKED_PAYLOAD_TYPE', retryAfterSec: 2 },
      retry: { afterSec: 2 },
    });
    expect(tagged(w, t)).toHaveLength(0);
  });

  it('the server blocks a connection above 50 req/s; the adapter paces itself below it', async () => {
    const w = await world();
    const ctid = w.server.ctidTraderAccountIdOf(w.simAccountId);
    const raw = new CTraderConnection({
      endpoint: { ...w.server.endpoints.demo, ca: w.server.ca },
      clientId: w.server.clientId,
      clientSecret: w.server.clientSecret,
      rateLimitPerSecond: 10_000,
    });
    try {
      raw.addAccount(ctid, w.tokens);
      await raw.ensureAccount(ctid);
      const results = await Promise.allSettled(
        Array.from({ length: 70 }, () => raw.request(PT.TRADER_REQ, { ctidTraderAccountId: ctid })),
      );
      const blocked = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
      expect(blocked.length).toBeGreaterThan(0);
      expect(blocked[0]).toBeInstanceOf(OpenApiError);
      expect(blocked[0]).toMatchObject({ errorCode: 'BLOCKED_PAYLOAD_TYPE', retryAfter: 1 });
    } finally {
      await raw.close();
    }
    // Same burst through the adapter: slower, but nothing refused.
    await sleep(1100);
    const reads = await Promise.allSettled(
      Array.from({ length: 60 }, () => w.adapter.instrument('EURUSD').then(() => w.adapter.listPositions())),
    );
    expect(
      reads
        .filter((r) => r.status === 'rejected')
        .map((r) => String((r as PromiseRejectedResult).reason))
        .slice(0, 3),
    ).toEqual([]);
  }, 15_000);

  it('a request given up on while it waits in our own rate window is never sent, and says rate_limited', async () => {
    const w = await world();
    const ctid = w.server.ctidTraderAccountIdOf(w.simAccountId);
    const conn = new CTraderConnection({
      endpoint: { ...w.server.endpoints.demo, ca: w.server.ca },
      clientId: w.server.clientId,
      clientSecret: w.server.clientSecret,
      rateLimitPerSecond: 1,
    });
    try {
      conn.addAccount(ctid, w.tokens);
      await conn.ensureAccount(ctid);
      const before = w.server.requestStats().requests.ProtoOATraderReq?.count ?? 0;
      // The window (one a second) is held by the account auth: both wait; the second is given up on at once.
      const kept = conn.accountRequest(ctid, PT.TRADER_REQ, {}, { idempotent: true });
      const ctl = new AbortController();
      const dropped = conn.accountRequest(ctid, PT.TRADER_REQ, {}, { idempotent: true, signal: ctl.signal });
      ctl.abort();
      const err = await dropped.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(NotSentError);
      expect((err as NotSentError).appError.code).toBe('rate_limited');
      expect((err as NotSentError).message).toMatch(/not sent/);
      await kept;
      // The window is first come, first served: had the dropped one been sent, it would have gone before this one.
      await conn.accountRequest(ctid, PT.TRADER_REQ, {}, { idempotent: true });
      expect(w.server.requestStats().requests.ProtoOATraderReq?.count).toBe(before + 2);
    } finally {
      await conn.close();
    }
  });

  it("a read given up on while its account's authorisation waits in our own window is not sent; the authorisation still is", async () => {
    const w = await world();
    const other = w.broker.createAccount({ balance: 5_000, meta: { ctidUserId: 'u1', environment: 'demo' } });
    const [ctid, ctid2] = [w.simAccountId, other.id].map((id) => w.server.ctidTraderAccountIdOf(id)) as [
      string,
      string,
    ];
    const conn = new CTraderConnection({
      endpoint: { ...w.server.endpoints.demo, ca: w.server.ca },
      clientId: w.server.clientId,
      clientSecret: w.server.clientSecret,
      rateLimitPerSecond: 1,
    });
    try {
      conn.addAccount(ctid, w.tokens);
      conn.addAccount(ctid2, w.tokens);
      await conn.ensureAccount(ctid);
      // The second account's authorisation waits behind the first one's for a place in the window.
      const ctl = new AbortController();
      const read = conn.accountRequest(ctid2, PT.TRADER_REQ, {}, { idempotent: true, signal: ctl.signal });
      ctl.abort();
      const err = await read.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(NotSentError);
      expect((err as NotSentError).appError.code).toBe('rate_limited');
      expect((err as NotSentError).message).toMatch(/authorisation/);
      // The shared authorisation went on: the account is authorised without another request of ours.
      await conn.ensureAccount(ctid2, 10_000);
      expect(conn.accountStatus(ctid2)?.state).toBe('authorised');
      expect(w.server.requestStats().requests.ProtoOAAccountAuthReq?.count).toBe(2 + 1);
    } finally {
      await conn.close();
    }
  });

  it('token invalidated: the write is rejected as reconnect_required, later reads too, nothing placed', async () => {
    const w = await world();
    const t = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'token_invalidated', accountId: w.simAccountId });
    const out = await w.adapter.placeOrder(buy(t));
    expect(out).toMatchObject({ kind: 'rejected', code: 'reconnect_required' });
    expect(tagged(w, t)).toHaveLength(0);
    expect((await appError(w.adapter.listPositions())).code).toBe('reconnect_required');
    expect((await w.adapter.placeOrder(buy(tag()))).kind).toMatch(/denied|rejected/);
    expect(w.broker.positions(w.simAccountId)).toHaveLength(0);
  });

  it('token expired: the adapter refreshes (single-use refresh token), re-authorises and the read succeeds', async () => {
    const w = await world();
    w.broker.faults.inject({ op: 'read', kind: 'token_expired', accountId: w.simAccountId });
    const info = await w.adapter.accountInfo();
    expect(info.balance.toString()).toBe('10000');
    expect(w.refreshed).toHaveLength(1);
    expect(w.refreshed[0]!.accessToken).not.toBe(w.tokens.accessToken);
    // And a write after an expiry is resent once after the refresh: exactly one position.
    const t = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'token_expired', accountId: w.simAccountId });
    expect(await w.adapter.placeOrder(buy(t))).toMatchObject({ kind: 'confirmed' });
    expect(tagged(w, t)).toHaveLength(1);
    expect(w.refreshed).toHaveLength(2);
  });

  it('client disconnect event: reconnects with backoff, re-authorises, reads work again', async () => {
    const w = await world();
    const conn = [...w.factory.connections().values()][0]!;
    w.broker.faults.inject({ op: 'read', kind: 'disconnect', accountId: w.simAccountId, message: 'maintenance' });
    // The read in flight is resent once after the reconnect (reads are idempotent).
    expect(await w.adapter.listPositions()).toEqual([]);
    expect(conn.reconnects).toBe(1);
    expect(conn.lastError).toMatch(/maintenance|closed|socket/);
    await w.adapter.placeOrder(buy(tag()));
    expect(await w.adapter.listPositions()).toHaveLength(1);
  });

  it('disconnect during a write: unresolved, never resent, nothing duplicated', async () => {
    const w = await world();
    const t = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'disconnect', accountId: w.simAccountId });
    expect(await w.adapter.placeOrder(buy(t))).toMatchObject({ kind: 'unresolved' });
    expect(tagged(w, t)).toHaveLength(0);
    expect(await w.adapter.findByTag(t)).toEqual({ found: false });
  });

  it('reject: rejected with the broker code, nothing opened', async () => {
    const w = await world();
    const t = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: w.simAccountId, message: 'desk closed' });
    const out = await w.adapter.placeOrder(buy(t));
    expect(out).toMatchObject({ kind: 'rejected', raw: { errorCode: 'TRADING_DISABLED' } });
    expect(out.kind === 'rejected' && out.message).toMatch(/desk closed/);
    expect(tagged(w, t)).toHaveLength(0);
  });

  it('delay: under the timeout confirmed; over it unresolved but applied exactly once', async () => {
    const w = await world();
    const t1 = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 100, accountId: w.simAccountId });
    expect(await w.adapter.placeOrder(buy(t1))).toMatchObject({ kind: 'confirmed' });
    const t2 = tag();
    w.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 700, accountId: w.simAccountId });
    expect(await w.adapter.placeOrder(buy(t2))).toMatchObject({ kind: 'unresolved' });
    await sleep(400);
    expect(tagged(w, t2)).toHaveLength(1);
    expect((await w.adapter.findByTag(t2)).position?.id).toBe(tagged(w, t2)[0]!.id);
  });

  it('heartbeats keep an idle connection alive', async () => {
    const w = await world({ heartbeatMs: 50 });
    const conn = [...w.factory.connections().values()][0]!;
    await sleep(1_500);
    expect(conn.reconnects).toBe(0);
    expect(await w.adapter.listPositions()).toEqual([]);
  });
});
