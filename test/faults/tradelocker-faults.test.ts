import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { TradeLockerAdapter } from '../../src/platforms/tradelocker/adapter.js';
import { TradeLockerRawClient } from '../../src/platforms/tradelocker/raw-client.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startTradeLockerSimServer, type TradeLockerSimOptions } from '../../src/simulator/tradelocker/server.js';
import { appError } from '../helpers/app-error.js';

/**
 * Every fault the simulator can inject, seen through the TradeLocker adapter over loopback: the outcome kind
 * must be right, and the simulator's book must show the write applied at most once (nothing duplicated by a
 * hidden retry, nothing lost by a false "rejected").
 */

const TIMEOUT_MS = 300;
const META = { email: 'faults@example.com', password: 'secret-pw', server: 'SIMFAULTS', environment: 'demo' };

/** `now` is given to both the simulator and the adapter, so a test moves token lifetimes and windows without sleeping. */
async function setup(serverOpts: TradeLockerSimOptions = {}) {
  const broker = new SimBroker({ seed: 3 });
  const acc = broker.createAccount({ balance: 50_000, meta: META });
  broker.setPrice('EURUSD', '1.08000');
  const server = await startTradeLockerSimServer(broker, serverOpts);
  const adapter = new TradeLockerAdapter({
    baseUrl: server.baseUrl,
    ...META,
    accountId: acc.login,
    accNum: 1,
    timeoutMs: TIMEOUT_MS,
    ...(serverOpts.now ? { now: serverOpts.now } : {}),
  });
  await adapter.connect();
  return { broker, acc, server, adapter };
}

let tagSeq = 0;
const newTag = () => `ft${Date.now().toString(36)}${(++tagSeq).toString(36)}`;
const market = (tag: string, volume = '0.10'): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec(volume),
  tag,
});

describe('TradeLocker faults', () => {
  let t: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    t = await setup();
  });
  afterEach(() => t.broker.faults.clear());
  afterAll(async () => {
    await t.adapter.close();
    await t.server.close();
  });

  const tagged = (tag: string) => t.broker.positions(t.acc.id).filter((p) => p.tag === tag);
  const taggedOrders = (tag: string) =>
    t.broker.orders(t.acc.id, { includeHistory: true }).filter((o) => o.tag === tag);

  it('timeout after apply on a full close: unresolved, position gone, nothing reopened', async () => {
    const tag = newTag();
    await t.adapter.placeOrder(market(tag));
    const pos = tagged(tag)[0]!;
    t.broker.faults.inject({ op: 'closePosition', kind: 'timeout_after_apply', accountId: t.acc.id });
    expect(await t.adapter.closePosition(pos.id)).toMatchObject({ kind: 'unresolved' });
    const found = await t.adapter.findByTag(tag);
    expect(found.position).toBeUndefined();
    expect(found.order?.status).toBe('filled');
    expect(tagged(tag)).toHaveLength(0);
    // One opening fill and one closing fill: the close was not sent twice.
    expect(t.broker.deals(t.acc.id).filter((d) => d.positionId === pos.id)).toHaveLength(2);
  });

  it('connection reset on a read: upstream_unavailable', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'reset', accountId: t.acc.id });
    expect((await appError(t.adapter.listPositions())).code).toBe('upstream_unavailable');
  });

  it('read timeout: upstream_unavailable, and the next read works', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'timeout_before_apply', accountId: t.acc.id });
    expect((await appError(t.adapter.listOrders())).code).toBe('upstream_unavailable');
    await expect(t.adapter.listOrders()).resolves.toBeInstanceOf(Array);
  });

  it('rejection with HTTP 200 and s:"error": rejected with the broker message, nothing opened', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'reject', message: 'Market is closed', accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag));
    expect(out).toMatchObject({ kind: 'rejected', message: 'Market is closed' });
    expect(taggedOrders(tag)).toHaveLength(0);
  });

  it('a business rejection by the simulator also arrives as HTTP 200 s:"error" and becomes rejected', async () => {
    const tag = newTag();
    const out = await t.adapter.placeOrder(market(tag, '500'));
    expect(out.kind).toBe('rejected');
    expect(taggedOrders(tag)).toHaveLength(0);
  });

  it('429 on a read: rate_limited with retryAfter, and the adapter holds back for that long', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'rate_limit', retryAfterSec: 1, accountId: t.acc.id });
    const err = await appError(t.adapter.listPositions());
    expect(err).toMatchObject({ code: 'rate_limited', retryAfter: 1, retryable: true });
    const started = Date.now();
    await t.adapter.listPositions();
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('429 on a write: rejected rate_limited, marked to send again after Retry-After, nothing applied', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 1, accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag));
    expect(out).toMatchObject({ kind: 'rejected', code: 'rate_limited', retry: { afterSec: 1 } });
    expect(taggedOrders(tag)).toHaveLength(0);
  });

  it('token expiry on a read: refreshed transparently and retried once', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'token_expired', accountId: t.acc.id });
    await expect(t.adapter.listPositions()).resolves.toBeInstanceOf(Array);
    expect(t.broker.faults.list()).toHaveLength(0);
  });

  it('token invalidated (refresh token dead too): the adapter signs in again on a read', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'token_invalidated', accountId: t.acc.id });
    await expect(t.adapter.accountInfo()).resolves.toMatchObject({ currency: 'USD' });
  });

  it('token expiry on a write: not retried (rejected broker_auth_failed, nothing applied), the next write works', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'token_expired', accountId: t.acc.id });
    expect(await t.adapter.placeOrder(market(tag))).toMatchObject({ kind: 'rejected', code: 'broker_auth_failed' });
    expect(taggedOrders(tag)).toHaveLength(0);
    const tag2 = newTag();
    expect(await t.adapter.placeOrder(market(tag2))).toMatchObject({ kind: 'confirmed' });
    expect(tagged(tag2)).toHaveLength(1);
  });

  it('partial fill: confirmed with the filled part, and that is what the book holds', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'partial_fill', partialRatio: 0.5, accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag, '0.40'));
    expect(out.kind).toBe('confirmed');
    if (out.kind !== 'confirmed') return;
    expect(out.filledVolume?.toString()).toBe('0.2');
    expect(out.positionId).toBe(tagged(tag)[0]!.id);
    expect(tagged(tag)[0]!.volume.toString()).toBe('0.2');
    const listed = (await t.adapter.listOrders({ includeHistory: true })).find((o) => o.tag === tag);
    expect(listed?.filledVolume.toString()).toBe('0.2');
    expect(listed?.volume.toString()).toBe('0.4');
  });

  it('delay shorter than the timeout: confirmed, applied once', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 100, accountId: t.acc.id });
    expect(await t.adapter.placeOrder(market(tag))).toMatchObject({ kind: 'confirmed' });
    expect(tagged(tag)).toHaveLength(1);
  });

  it('a marketable limit is filled at once by the server and settles as confirmed with its fill', async () => {
    const tag = newTag();
    t.broker.setPrice('EURUSD', '1.08000');
    const bid = t.broker.quote('EURUSD').bid;
    const out = await t.adapter.placeOrder({
      symbol: 'EURUSD',
      side: 'sell',
      type: 'limit',
      volume: dec('0.10'),
      price: dec('1.07000'),
      tag,
    });
    expect(out).toMatchObject({ kind: 'confirmed', positionId: tagged(tag)[0]!.id });
    if (out.kind !== 'confirmed') return;
    expect(out.filledVolume?.toString()).toBe('0.1');
    expect(out.fillPrice?.toString()).toBe(bid.toString());
    expect(taggedOrders(tag)).toHaveLength(1);
  });

  it('a tag longer than strategyId allows is denied before sending', async () => {
    const tag = 'x'.repeat(33);
    expect(await t.adapter.placeOrder(market(tag))).toMatchObject({ kind: 'denied', code: 'tag_too_long' });
    expect(taggedOrders(tag)).toHaveLength(0);
  });
});

describe('TradeLocker served rate limits and token lifetime', () => {
  it('the server answers 429 with Retry-After past the served limit; the adapter paces itself below it', async () => {
    let skewMs = 0;
    const t = await setup({
      now: () => Date.now() + skewMs,
      rateLimits: [{ rateLimitType: 'GET_POSITIONS', measure: 'SECONDS', intervalNum: 1, limit: 3 }],
    });
    try {
      // The raw client does no pacing: hammering gets refused.
      const raw = new TradeLockerRawClient({ baseUrl: t.server.baseUrl, timeoutMs: 1000 });
      const signIn = await raw.signIn(META);
      const token = (signIn as { body: { accessToken: string } }).body.accessToken;
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await raw.positions({ accessToken: token, accNum: 1 }, t.acc.login));
      const limited = results.find((r) => r.kind === 'response' && r.status === 429);
      expect(limited).toMatchObject({ kind: 'response', status: 429 });
      expect(limited?.kind === 'response' && limited.retryAfterSec).toBeGreaterThan(0);

      // The window is per user and account, so the server's clock moves past the raw client's hits; the adapter
      // starts on an empty window and must never see a 429 while pacing (its pacing runs on wall time).
      skewMs += 1100;
      const started = Date.now();
      for (let i = 0; i < 6; i++) await t.adapter.listPositions();
      expect(Date.now() - started).toBeGreaterThan(1000);
    } finally {
      await t.adapter.close();
      await t.server.close();
    }
  });

  it('a short-lived access token is refreshed ahead of expiry, so writes keep working', async () => {
    let skewMs = 0;
    const t = await setup({ accessTokenTtlSec: 2, now: () => Date.now() + skewMs });
    try {
      skewMs += 2100; // the first access token is expired on both sides' clocks
      const tag = newTag();
      expect(await t.adapter.placeOrder(market(tag))).toMatchObject({ kind: 'confirmed' });
      expect(t.broker.positions(t.acc.id).filter((p) => p.tag === tag)).toHaveLength(1);
    } finally {
      await t.adapter.close();
      await t.server.close();
    }
  });
});
