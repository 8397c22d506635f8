import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { PlaceOrderRequest } from '../../src/platforms/adapter.js';
import {
  type CTraderSlave as Slave,
  type CTraderWorld,
  sentSince,
  warmCTraderWorld,
} from '../helpers/ctrader-world.js';

/**
 * An amendment of a pending order knows the order's type and symbol from the execution events the connection
 * already receives, so it sends one request (the amendment), not a reconcile first: an amendment fanned out to 50
 * accounts on one connection was 100 requests on one rate window of 50, the second 50 a second late.
 */

const world = warmCTraderWorld;

let seq = 0;
const tag = () => `amd${Date.now().toString(36)}${++seq}`;
/** A buy limit well below the market: it stays pending until the test moves the price to it. */
const limitPrice = (w: CTraderWorld) => w.broker.quote('EURUSD').bid.minus('0.0100');

async function placeLimit(w: CTraderWorld, s: Slave): Promise<string> {
  const req: PlaceOrderRequest = {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'limit',
    volume: dec('0.10'),
    price: limitPrice(w),
    tag: tag(),
  };
  const out = await s.adapter.placeOrder(req);
  if (out.kind !== 'confirmed' || !out.brokerOrderId) throw new Error(`place failed: ${JSON.stringify(out)}`);
  return out.brokerOrderId;
}

const priceOf = (w: CTraderWorld, s: Slave, orderId: string) =>
  w.broker.order(s.simAccountId, orderId)?.price?.toString();

describe('a cTrader amendment of our own pending order', () => {
  it('sends one request: the amendment (the order is known from its acceptance, no reconcile)', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const orderId = await placeLimit(w, s);
    const price = limitPrice(w).minus('0.0010');
    const before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(orderId, { price })).toMatchObject({ kind: 'confirmed' });
    expect(sentSince(w, before)).toEqual({ ProtoOAAmendOrderReq: 1 });
    expect(priceOf(w, s, orderId)).toBe(price.toString());
  });

  it('an order placed at the broker by hand is known from its pushed event, without a read', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const { order } = w.broker.placeOrder(s.simAccountId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'stop',
      volume: dec('0.10'),
      price: w.broker.quote('EURUSD').ask.plus('0.0100'),
      tag: tag(),
    });
    await expect.poll(() => s.events.some((e) => e.kind === 'order_placed')).toBe(true);
    const price = order.price!.plus('0.0010');
    const before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(order.id, { price })).toMatchObject({ kind: 'confirmed' });
    expect(sentSince(w, before)).toEqual({ ProtoOAAmendOrderReq: 1 });
    // A stop order: the amendment set stopPrice, which the view knew from the order's type.
    expect(priceOf(w, s, order.id)).toBe(price.toString());
  });

  it('an order cancelled at the broker meanwhile is not served from the view: it is read, and not found', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const orderId = await placeLimit(w, s);
    w.broker.cancelOrder(s.simAccountId, orderId);
    await expect.poll(() => s.events.some((e) => e.kind === 'order_cancelled')).toBe(true);
    const before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(orderId, { price: limitPrice(w) })).toMatchObject({
      kind: 'rejected',
      code: 'order_not_found',
    });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1 });
  });

  it('an order filled meanwhile is not served from the view: it is read, and not found', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const orderId = await placeLimit(w, s);
    const at = w.broker.order(s.simAccountId, orderId)!.price!;
    w.broker.setPrice('EURUSD', at.minus('0.0010'));
    await expect.poll(() => s.events.some((e) => e.kind === 'order_filled')).toBe(true);
    const before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(orderId, { price: at })).toMatchObject({
      kind: 'rejected',
      code: 'order_not_found',
    });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1 });
  });

  it('after a reconnect the view is not trusted: the first amendment reads first, the next one does not', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const conn = [...w.factory.connections().values()][0]!;
    const first = await placeLimit(w, s);
    const second = await placeLimit(w, s);
    w.broker.faults.inject({ op: 'read', kind: 'disconnect', accountId: s.simAccountId, message: 'maintenance' });
    await s.adapter.accountInfo();
    expect(conn.reconnects).toBe(1);
    const price = limitPrice(w).minus('0.0020');
    let before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(first, { price })).toMatchObject({ kind: 'confirmed' });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1, ProtoOAAmendOrderReq: 1 });
    before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!(second, { price })).toMatchObject({ kind: 'confirmed' });
    expect(sentSince(w, before)).toEqual({ ProtoOAAmendOrderReq: 1 });
    expect(priceOf(w, s, first)).toBe(price.toString());
    expect(priceOf(w, s, second)).toBe(price.toString());
  });

  it('an order the view does not hold is read, and one that does not exist is still order_not_found', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const before = w.server.requestStats().requests;
    expect(await s.adapter.modifyOrder!('999999', { price: limitPrice(w) })).toMatchObject({
      kind: 'rejected',
      code: 'order_not_found',
    });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1 });
  });
});

describe('50 cTrader Slaves on one connection', () => {
  it('amend their pending orders with 50 requests in all (no reconcile)', async () => {
    const w = await world(50, 50);
    expect(w.factory.connections().size).toBe(1);
    const ids = await Promise.all(w.slaves.map((s) => placeLimit(w, s)));
    const price = limitPrice(w).minus('0.0010');
    const before = w.server.requestStats().requests;
    const outs = await Promise.all(w.slaves.map((s, i) => s.adapter.modifyOrder!(ids[i]!, { price })));
    expect(outs.filter((o) => o.kind === 'confirmed')).toHaveLength(50);
    // Before: 50 reconciles and 50 amendments, the amendments a second behind the reads in the window of 50.
    expect(sentSince(w, before)).toEqual({ ProtoOAAmendOrderReq: 50 });
    w.slaves.forEach((s, i) => {
      expect(priceOf(w, s, ids[i]!)).toBe(price.toString());
    });
  }, 30_000);
});
