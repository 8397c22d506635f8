import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { Position } from '../../src/domain/types.js';
import type { BrokerEvent, PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { MetaTraderAdapter } from '../../src/platforms/metatrader/adapter.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import { MetaApiGateway } from '../../src/platforms/metatrader/gateway.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startMetaApiSimServer } from '../../src/simulator/metaapi/server.js';
import { appError } from '../helpers/app-error.js';
import { until } from '../helpers/cli-process.js';

/**
 * Every fault the simulator can inject, seen through the MetaTrader adapter over MetaApi REST on loopback: the
 * outcome kind must be right, and the simulator's book must show the write applied at most once (nothing
 * duplicated by a hidden retry, nothing lost by a false "rejected").
 */

const TIMEOUT_MS = 300;

async function setup(opts: { platform?: 'mt4' | 'mt5'; hedging?: boolean; stream?: boolean } = {}) {
  const platform = opts.platform ?? 'mt5';
  const broker = new SimBroker({ seed: 9 });
  const meta = { server: `Faults-${platform}`, password: 'pw-faults', platform };
  const acc = broker.createAccount({ balance: 50_000, hedging: opts.hedging ?? true, meta });
  broker.setPrice('EURUSD', '1.08000');
  const server = await startMetaApiSimServer(broker, { detectionMs: 5, deployMs: 5, connectMs: 5 });
  const p = await provisionMtAccount({
    baseUrl: server.baseUrl,
    token: server.token,
    hosts: server.hosts,
    server: meta.server,
    login: acc.login,
    password: meta.password,
    platform,
    waitMs: 3_000,
    pollMs: 5,
  });
  const gateway = new MetaApiGateway({
    clientUrl: server.clientApiUrls['new-york']!,
    token: server.token,
    accountId: p.accountId,
    timeoutMs: TIMEOUT_MS,
  });
  const stream = {
    clientUrl: server.streamUrls['new-york']!,
    token: server.token,
    accountId: p.accountId,
    reconnectMinMs: 20,
    reconnectMaxMs: 50,
    subscribeRetryMs: 100,
  };
  const adapter = new MetaTraderAdapter({ gateway, platform, pollIntervalMs: 250, ...(opts.stream ? { stream } : {}) });
  await adapter.connect();
  return { broker, acc, server, adapter };
}

let tagSeq = 0;
const newTag = () => `ft${Date.now().toString(36)}${(++tagSeq).toString(36)}`;
const market = (tag: string, volume = '0.10', side: 'buy' | 'sell' = 'buy'): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side,
  type: 'market',
  volume: dec(volume),
  tag,
});

describe('MetaTrader (MetaApi) faults, MT5 hedging', () => {
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

  it('-11 TRADE_RETCODE_DISCONNECTED_DURING_TRADE: unresolved, applied once, settled by findByTag', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'disconnect', accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag));
    expect(out).toMatchObject({ kind: 'unresolved', code: 'write_outcome_unknown' });
    expect(out.kind === 'unresolved' && out.message).toContain('TRADE_RETCODE_DISCONNECTED_DURING_TRADE');
    const found = await t.adapter.findByTag(tag);
    expect(found.found).toBe(true);
    expect(tagged(tag)).toHaveLength(1);
    expect(found.position?.id).toBe(tagged(tag)[0]!.id);
    expect(taggedOrders(tag)).toHaveLength(1);
  });

  it('429 with recommendedRetryTime on a write: rejected rate_limited with retryAfterSec, nothing applied', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 4, accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag));
    expect(out).toMatchObject({ kind: 'rejected', code: 'rate_limited' });
    const retryAfterSec = (out as { raw?: { retryAfterSec?: number } }).raw?.retryAfterSec;
    expect(retryAfterSec).toBeGreaterThanOrEqual(3);
    expect(retryAfterSec).toBeLessThanOrEqual(4);
    // The engine reads the hint here: a refusal to send again, after it.
    expect(out).toMatchObject({ retry: { afterSec: retryAfterSec } });
    expect(taggedOrders(tag)).toHaveLength(0);
  });

  it('broker rejection (TRADE_RETCODE_REJECT in a 200): rejected, nothing applied', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag));
    expect(out).toMatchObject({
      kind: 'rejected',
      code: 'rejected',
      raw: { numericCode: 10006, stringCode: 'TRADE_RETCODE_REJECT' },
    });
    expect(taggedOrders(tag)).toHaveLength(0);
  });

  it('business refusals carry their own codes: invalid volume and invalid stops', async () => {
    expect(await t.adapter.placeOrder(market(newTag(), '0.015'))).toMatchObject({
      kind: 'rejected',
      code: 'invalid_volume',
    });
    expect(await t.adapter.placeOrder({ ...market(newTag()), takeProfit: dec('1.0') })).toMatchObject({
      kind: 'rejected',
      code: 'invalid_stops',
    });
  });

  it('connection reset on a read: upstream_unavailable, and the next read works', async () => {
    t.broker.faults.inject({ op: 'read', kind: 'reset', accountId: t.acc.id });
    expect((await appError(t.adapter.listPositions())).code).toBe('upstream_unavailable');
    expect(Array.isArray(await t.adapter.listPositions())).toBe(true);
  });

  it('partial fill: confirmed with the filled volume (TRADE_RETCODE_DONE_PARTIAL), position holds only that', async () => {
    const tag = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'partial_fill', partialRatio: 0.5, accountId: t.acc.id });
    const out = await t.adapter.placeOrder(market(tag, '0.20'));
    expect(out).toMatchObject({ kind: 'confirmed', raw: { numericCode: 10010 } });
    expect(out.kind === 'confirmed' && out.filledVolume?.toString()).toBe('0.1');
    expect(out.kind === 'confirmed' && out.fillPrice !== null).toBe(true);
    expect(tagged(tag)[0]?.volume.toString()).toBe('0.1');
  });

  it('delay shorter than the timeout: confirmed; longer: unresolved but applied once', async () => {
    const fast = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 50, accountId: t.acc.id });
    expect(await t.adapter.placeOrder(market(fast))).toMatchObject({ kind: 'confirmed' });
    const slow = newTag();
    t.broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: TIMEOUT_MS * 2, accountId: t.acc.id });
    expect(await t.adapter.placeOrder(market(slow))).toMatchObject({ kind: 'unresolved' });
    await new Promise((r) => setTimeout(r, TIMEOUT_MS * 2));
    expect(tagged(slow)).toHaveLength(1);
  });

  it('revoked token: rejected broker_auth_failed on a write, AppError broker_auth_failed on a read', async () => {
    t.broker.faults.inject({ op: 'placeOrder', kind: 'token_invalidated', accountId: t.acc.id });
    expect(await t.adapter.placeOrder(market(newTag()))).toMatchObject({
      kind: 'rejected',
      code: 'broker_auth_failed',
    });
    t.broker.faults.inject({ op: 'read', kind: 'token_invalidated', accountId: t.acc.id });
    expect((await appError(t.adapter.accountInfo())).code).toBe('broker_auth_failed');
  });

  it('faults on modify, cancel and close map the same way', async () => {
    const tag = newTag();
    await t.adapter.placeOrder(market(tag));
    const pos = tagged(tag)[0]!;
    t.broker.faults.inject({ op: 'modifyPosition', kind: 'disconnect', accountId: t.acc.id });
    expect(await t.adapter.modifyPosition(pos.id, { stopLoss: dec('1.07'), takeProfit: null })).toMatchObject({
      kind: 'unresolved',
    });
    expect(tagged(tag)[0]?.stopLoss?.toString()).toBe('1.07');
    const lim = newTag();
    const placed = await t.adapter.placeOrder({
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('0.1'),
      price: dec('1.07'),
      tag: lim,
    });
    const oid = placed.kind === 'confirmed' ? placed.brokerOrderId! : '';
    t.broker.faults.inject({ op: 'cancelOrder', kind: 'reject', accountId: t.acc.id });
    expect(await t.adapter.cancelOrder(oid)).toMatchObject({ kind: 'rejected' });
    expect(t.broker.orders(t.acc.id).some((o) => o.id === oid)).toBe(true);
    expect(await t.adapter.cancelOrder(oid)).toMatchObject({ kind: 'confirmed', brokerOrderId: oid });
    t.broker.faults.inject({ op: 'closePosition', kind: 'reset', accountId: t.acc.id });
    expect(await t.adapter.closePosition(pos.id)).toMatchObject({ kind: 'unresolved' });
    expect(tagged(tag)).toHaveLength(1);
  });

  it('a tag that breaks the 26-character rule is denied before sending', async () => {
    const out = await t.adapter.placeOrder(market('x'.repeat(27)));
    expect(out).toMatchObject({ kind: 'denied', code: 'tag_invalid' });
  });
});

describe('MetaTrader (MetaApi) MT4 accounts', () => {
  it('MT4: MT4 error codes classify the same way (ERR_NO_ERROR confirmed, ERR_INVALID_TRADE_VOLUME, ERR_COMMON_ERROR, -11)', async () => {
    const t = await setup({ platform: 'mt4' });
    try {
      expect(t.adapter.capabilities.hedging).toBe(true);
      expect(await t.adapter.placeOrder(market(newTag()))).toMatchObject({
        kind: 'confirmed',
        raw: { numericCode: 0, stringCode: 'ERR_NO_ERROR' },
      });
      expect(await t.adapter.placeOrder(market(newTag(), '0.015'))).toMatchObject({
        kind: 'rejected',
        code: 'invalid_volume',
        raw: { numericCode: 131 },
      });
      t.broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: t.acc.id });
      expect(await t.adapter.placeOrder(market(newTag()))).toMatchObject({
        kind: 'rejected',
        code: 'rejected',
        raw: { numericCode: 2 },
      });
      const tag = newTag();
      t.broker.faults.inject({ op: 'placeOrder', kind: 'disconnect', accountId: t.acc.id });
      expect(await t.adapter.placeOrder(market(tag))).toMatchObject({ kind: 'unresolved' });
      expect((await t.adapter.findByTag(tag)).found).toBe(true);
      expect(t.broker.positions(t.acc.id).filter((p) => p.tag === tag)).toHaveLength(1);
    } finally {
      await t.adapter.close();
      await t.server.close();
    }
  });
});

/**
 * The stream of platform A under network faults: cut mid-burst, refused for a while. Whatever the Master did
 * is reported exactly once in the end: by the stream, by the REST polls that stand in while it is down, or by
 * the resynchronization after it returns (diffed against the last state, so nothing twice).
 */
describe('MetaTrader (MetaApi) stream faults', () => {
  let t: Awaited<ReturnType<typeof setup>>;
  const seen: BrokerEvent[] = [];
  let off: () => void = () => {};
  let seq = 0;
  beforeAll(async () => {
    t = await setup({ stream: true });
    off = t.adapter.subscribe((ev) => seen.push(ev));
    await until('the stream is synchronized', () => t.adapter.streaming, 10_000);
  });
  afterAll(async () => {
    off();
    t.server.stream.refuse(false);
    await t.adapter.close();
    await t.server.close();
  });

  const count = (kind: BrokerEvent['kind'], id: string) =>
    seen.filter((e) => e.kind === kind && e.position?.id === id).length;
  const open = () =>
    t.broker.placeOrder(t.acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.01'),
      tag: `sf${++seq}`,
    }).position!;
  /** Lets queued socket writes and reads run (no wall-clock wait). */
  const turn = () => new Promise<void>((r) => setImmediate(r));

  it('a socket cut twice in the middle of a burst loses nothing and doubles nothing', async () => {
    const early: Position[] = [];
    for (let i = 0; i < 12; i++) {
      early.push(open());
      await turn();
    }
    await until('the early opens are streamed', () => early.every((p) => count('position_opened', p.id) === 1), 5_000);
    const late: Position[] = [];
    for (let i = 0; i < 24; i++) {
      if (i === 5 || i === 15) t.server.stream.drop();
      late.push(open());
      if (i % 2 === 0) t.broker.closePosition(t.acc.id, early[i / 2]!.id);
      await turn();
    }
    const closed = early.slice(0, 12);
    await until(
      'every open and close is reported',
      () =>
        late.every((p) => count('position_opened', p.id) === 1) &&
        closed.every((p) => count('position_closed', p.id) === 1),
      15_000,
    );
    await until('the stream is back', () => t.adapter.streaming, 10_000);
    // One more change through the live stream: any late duplicate of the burst would have arrived before it.
    const marker = open();
    await until('the marker is streamed', () => count('position_opened', marker.id) === 1, 5_000);
    for (const p of [...early, ...late]) expect(count('position_opened', p.id), p.id).toBe(1);
    for (const p of closed) expect(count('position_closed', p.id), p.id).toBe(1);
    for (const p of late) expect(count('position_closed', p.id), p.id).toBe(0);
  });

  it('while the stream is refused, REST polls report the Master; once it is back, nothing is reported again', async () => {
    t.server.stream.refuse(true);
    t.server.stream.drop();
    await until('the stream is down', () => !t.adapter.streaming, 5_000);
    const during = open();
    await until('the poll reports the open', () => count('position_opened', during.id) === 1, 5_000);
    expect(t.adapter.streaming).toBe(false);
    t.broker.closePosition(t.acc.id, during.id);
    await until('the poll reports the close', () => count('position_closed', during.id) === 1, 5_000);
    t.server.stream.refuse(false);
    await until('the stream is back', () => t.adapter.streaming, 10_000);
    const after = open();
    await until('the stream reports the next open', () => count('position_opened', after.id) === 1, 5_000);
    expect(count('position_opened', during.id)).toBe(1);
    expect(count('position_closed', during.id)).toBe(1);
  });
});
