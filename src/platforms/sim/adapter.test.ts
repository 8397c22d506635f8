import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import { SimBroker, SimError } from '../../simulator/broker.js';
import type { FaultKind } from '../../simulator/contract.js';
import type { BrokerEvent, PlaceOrderRequest } from '../adapter.js';
import { SimAdapter } from './adapter.js';
import { SIM_CAPABILITIES } from './capabilities.js';
import { toAppError } from './errors.js';
import { createSimAdapterFactory } from './factory.js';

const TIMEOUT_MS = 30;

function setup(hedging = true) {
  const broker = new SimBroker({ seed: 1 });
  const acc = broker.createAccount({ balance: 10_000, hedging });
  const adapter = new SimAdapter(broker, acc.id, { timeoutMs: TIMEOUT_MS });
  return { broker, id: acc.id, adapter };
}

const order = (tag: string, extra: Partial<PlaceOrderRequest> = {}): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('0.25'),
  tag,
  ...extra,
});

async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('SimAdapter without faults', () => {
  it('confirms a market order with ids, fill volume and price', async () => {
    const { broker, id, adapter } = setup();
    const out = await adapter.placeOrder(order('ok', { stopLoss: dec('1.07') }));
    expect(out.kind).toBe('confirmed');
    if (out.kind !== 'confirmed') return;
    const [p] = broker.positions(id);
    expect(out.positionId).toBe(p?.id);
    expect(out.filledVolume?.toString()).toBe('0.25');
    expect(out.fillPrice?.toString()).toBe('1.08003');
    expect(out.brokerOrderId).toMatch(/^\d{19}$/);
    expect((await adapter.listPositions())[0]?.tag).toBe('ok');
  });

  it('turns a broker refusal into rejected with the mapped code', async () => {
    const { broker, id, adapter } = setup();
    expect(await adapter.placeOrder(order('bad', { volume: dec('0.015') }))).toMatchObject({
      kind: 'rejected',
      code: 'invalid_volume',
    });
    expect(await adapter.placeOrder(order('bad', { takeProfit: dec('1.0') }))).toMatchObject({
      kind: 'rejected',
      code: 'invalid_stops',
    });
    expect(await adapter.closePosition('123')).toMatchObject({ kind: 'rejected', code: 'position_not_found' });
    expect(broker.positions(id)).toEqual([]);
  });

  it('modifies SL/TP, partially and fully closes, and places/modifies/cancels pending orders', async () => {
    const { broker, id, adapter } = setup();
    const open = await adapter.placeOrder(order('life'));
    const pid = open.kind === 'confirmed' ? open.positionId! : '';
    expect(await adapter.modifyPosition(pid, { stopLoss: dec('1.07'), takeProfit: null })).toMatchObject({
      kind: 'confirmed',
      positionId: pid,
    });
    expect(broker.positions(id)[0]?.stopLoss?.toString()).toBe('1.07');
    const part = await adapter.closePosition(pid, dec('0.1'));
    expect(part).toMatchObject({ kind: 'confirmed', positionId: pid });
    expect(broker.positions(id)[0]?.volume.toString()).toBe('0.15');
    expect(await adapter.closePosition(pid)).toMatchObject({ kind: 'confirmed' });
    expect(broker.positions(id)).toEqual([]);

    const placed = await adapter.placeOrder(order('lim', { type: 'limit', price: dec('1.07') }));
    expect(placed).toMatchObject({ kind: 'confirmed', filledVolume: null, fillPrice: null, positionId: null });
    const oid = placed.kind === 'confirmed' ? placed.brokerOrderId! : '';
    expect(await adapter.modifyOrder(oid, { price: dec('1.06') })).toMatchObject({
      kind: 'confirmed',
      brokerOrderId: oid,
    });
    expect((await adapter.listOrders())[0]?.price?.toString()).toBe('1.06');
    expect(await adapter.cancelOrder(oid)).toMatchObject({ kind: 'confirmed', brokerOrderId: oid });
    expect(await adapter.listOrders()).toEqual([]);
    expect((await adapter.listOrders({ includeHistory: true })).map((o) => o.status)).toEqual([
      'filled',
      'filled',
      'filled',
      'cancelled',
    ]);
  });

  it('reads account info, instrument specs and tags', async () => {
    const { broker, adapter } = setup();
    const info = await adapter.accountInfo();
    expect(info.balance.toString()).toBe('10000');
    expect(info.currency).toBe('USD');
    expect(info.brokerAccountNumber).toBe(broker.accounts()[0]?.login);
    const spec = await adapter.instrument('US500');
    expect(spec?.volumeStep.toString()).toBe('0.1');
    expect(spec?.contractSize.toString()).toBe('1');
    expect(await adapter.instrument('NOPE')).toBeNull();
    await adapter.placeOrder(order('tagged'));
    expect((await adapter.findByTag('tagged')).position?.tag).toBe('tagged');
    expect(await adapter.findByTag('other')).toEqual({ found: false });
  });

  it('throws not_found on reads and rejects writes for an unknown account', async () => {
    const broker = new SimBroker();
    const adapter = new SimAdapter(broker, 'ghost', { timeoutMs: TIMEOUT_MS });
    expect((await appError(adapter.listPositions())).code).toBe('not_found');
    expect((await appError(adapter.accountInfo())).code).toBe('not_found');
    expect(await adapter.placeOrder(order('x'))).toMatchObject({ kind: 'rejected', code: 'unknown_account' });
  });

  it('forwards only its own account events until unsubscribed or closed', async () => {
    const { broker, adapter } = setup();
    const other = broker.createAccount({ balance: 1000 });
    const seen: BrokerEvent[] = [];
    const off = adapter.subscribe((ev) => seen.push(ev));
    await adapter.placeOrder(order('ev'));
    broker.placeOrder(other.id, order('not-mine', { volume: dec('0.01') }));
    expect(seen.map((e) => [e.kind, e.position?.tag])).toEqual([['position_opened', 'ev']]);
    off();
    await adapter.placeOrder(order('ev2'));
    adapter.subscribe((ev) => seen.push(ev));
    await adapter.close();
    await adapter.placeOrder(order('ev3'));
    expect(seen).toHaveLength(1);
  });

  it('declares the sim capabilities, hedging from the account', () => {
    expect(setup().adapter.capabilities).toEqual(SIM_CAPABILITIES);
    expect(setup(false).adapter.capabilities.hedging).toBe(false);
    expect(SIM_CAPABILITIES.hedging).toBe(true);
  });
});

describe('SimAdapter fault playback on writes', () => {
  const cases: { kind: FaultKind; outcome: object; applied: boolean; slow?: boolean }[] = [
    { kind: 'timeout_after_apply', outcome: { kind: 'unresolved', code: 'timeout' }, applied: true, slow: true },
    { kind: 'timeout_before_apply', outcome: { kind: 'unresolved', code: 'timeout' }, applied: false, slow: true },
    { kind: 'reset', outcome: { kind: 'unresolved', code: 'connection_reset' }, applied: false },
    { kind: 'disconnect', outcome: { kind: 'unresolved', code: 'connection_reset' }, applied: false },
    { kind: 'reject', outcome: { kind: 'rejected', code: 'rejected' }, applied: false },
    {
      kind: 'rate_limit',
      outcome: { kind: 'rejected', code: 'rate_limited', raw: { retryAfterSec: 4 }, retry: { afterSec: 4 } },
      applied: false,
    },
    { kind: 'token_invalidated', outcome: { kind: 'rejected', code: 'reconnect_required' }, applied: false },
    { kind: 'token_expired', outcome: { kind: 'confirmed' }, applied: true },
  ];

  for (const c of cases) {
    it(`${c.kind} -> ${JSON.stringify(c.outcome)}, ${c.applied ? 'applied' : 'not applied'}`, async () => {
      const { broker, id, adapter } = setup();
      broker.faults.inject({ op: 'placeOrder', kind: c.kind, accountId: id, retryAfterSec: 4 });
      const t0 = Date.now();
      const out = await adapter.placeOrder(order(`f-${c.kind}`));
      expect(out).toMatchObject(c.outcome);
      if (c.slow) expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      expect(broker.findByTag(id, `f-${c.kind}`).position !== undefined).toBe(c.applied);
      // The fault is spent: the next write goes through.
      expect((await adapter.placeOrder(order('after'))).kind).toBe('confirmed');
    });
  }

  it('cancel_after_timeout: times out, and the tag then shows a cancelled (or rejected) order with no position', async () => {
    const { broker, id, adapter } = setup();
    const events: string[] = [];
    broker.onEvent((acc, ev) => acc === id && events.push(`${ev.kind}:${ev.order?.status}`));
    broker.faults.inject({ op: 'placeOrder', kind: 'cancel_after_timeout', accountId: id });
    broker.faults.inject({ op: 'placeOrder', kind: 'cancel_after_timeout', refuseAs: 'rejected', accountId: id });
    expect(await adapter.placeOrder(order('cx'))).toMatchObject({ kind: 'unresolved', code: 'timeout' });
    expect(await adapter.placeOrder(order('rj'))).toMatchObject({ kind: 'unresolved', code: 'timeout' });
    expect(await adapter.findByTag('cx')).toMatchObject({
      found: true,
      order: { status: 'cancelled', type: 'market', positionId: null },
    });
    expect((await adapter.findByTag('rj')).order?.status).toBe('rejected');
    expect((await adapter.findByTag('cx')).position).toBeUndefined();
    expect(await adapter.listPositions()).toEqual([]);
    expect(events).toEqual([
      'order_placed:pending',
      'order_cancelled:cancelled',
      'order_placed:pending',
      'order_cancelled:rejected',
    ]);
  });

  it('delay shorter than the timeout waits, then confirms', async () => {
    const { broker, id, adapter } = setup();
    broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 15, accountId: id });
    const t0 = Date.now();
    expect((await adapter.placeOrder(order('slow'))).kind).toBe('confirmed');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(10);
  });

  it('delay past the timeout applies but answers unresolved', async () => {
    const { broker, id, adapter } = setup();
    broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 10 * TIMEOUT_MS, accountId: id });
    expect(await adapter.placeOrder(order('late'))).toMatchObject({ kind: 'unresolved', code: 'timeout' });
    expect(broker.findByTag(id, 'late').position).toBeDefined();
  });

  it('partial_fill fills the ratio rounded down to the lot step', async () => {
    const { broker, id, adapter } = setup();
    broker.faults.inject({ op: 'placeOrder', kind: 'partial_fill', partialRatio: 0.5, accountId: id });
    const out = await adapter.placeOrder(order('half'));
    expect(out.kind === 'confirmed' && out.filledVolume?.toString()).toBe('0.12');
    expect(broker.positions(id)[0]?.volume.toString()).toBe('0.12');
    broker.faults.inject({ op: 'closePosition', kind: 'partial_fill', partialRatio: 0.5, accountId: id });
    await adapter.closePosition(broker.positions(id)[0]!.id);
    expect(broker.positions(id)[0]?.volume.toString()).toBe('0.06');
  });

  it('plays faults on modify, close and cancel too', async () => {
    const { broker, id, adapter } = setup();
    const pid = broker.placeOrder(id, order('m')).position!.id;
    const oid = broker.placeOrder(id, order('p', { type: 'limit', price: dec('1.07') })).order.id;
    broker.faults.inject({ op: 'modifyPosition', kind: 'timeout_after_apply', accountId: id });
    expect((await adapter.modifyPosition(pid, { stopLoss: dec('1.07'), takeProfit: null })).kind).toBe('unresolved');
    expect(broker.positions(id)[0]?.stopLoss?.toString()).toBe('1.07');
    broker.faults.inject({ op: 'cancelOrder', kind: 'timeout_before_apply', accountId: id });
    expect((await adapter.cancelOrder(oid)).kind).toBe('unresolved');
    expect(broker.orders(id)).toHaveLength(1);
    broker.faults.inject({ op: 'modifyOrder', kind: 'reject', accountId: id });
    expect((await adapter.modifyOrder(oid, { price: dec('1.06') })).kind).toBe('rejected');
    expect(broker.orders(id)[0]?.price?.toString()).toBe('1.07');
    broker.faults.inject({ op: 'closePosition', kind: 'reset', accountId: id });
    expect((await adapter.closePosition(pid)).kind).toBe('unresolved');
    expect(broker.positions(id)).toHaveLength(1);
  });

  it('ignores faults aimed at another account', async () => {
    const { broker, adapter } = setup();
    broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: 'someone-else' });
    expect((await adapter.placeOrder(order('mine'))).kind).toBe('confirmed');
    expect(broker.faults.list()).toHaveLength(1);
  });
});

describe('SimAdapter fault playback on reads', () => {
  it('rate_limit throws rate_limited with retryAfter', async () => {
    const { broker, id, adapter } = setup();
    broker.faults.inject({ op: 'read', kind: 'rate_limit', retryAfterSec: 7, accountId: id });
    const err = await appError(adapter.listPositions());
    expect(err).toMatchObject({ code: 'rate_limited', retryAfter: 7, retryable: true });
    expect(await adapter.listPositions()).toEqual([]);
  });

  it('maps timeouts, resets, rejections and revoked tokens to AppErrors', async () => {
    const { broker, id, adapter } = setup();
    const expectRead = async (kind: FaultKind, code: string) => {
      broker.faults.inject({ op: 'read', kind, accountId: id });
      expect((await appError(adapter.accountInfo())).code).toBe(code);
    };
    await expectRead('timeout_before_apply', 'upstream_unavailable');
    await expectRead('reset', 'upstream_unavailable');
    await expectRead('reject', 'upstream_error');
    await expectRead('token_invalidated', 'reconnect_required');
    broker.faults.inject({ op: 'read', kind: 'delay', delayMs: 5, accountId: id });
    expect((await adapter.findByTag('none')).found).toBe(false);
  });
});

describe('sim errors and factory', () => {
  it('maps SimError codes to AppError codes', () => {
    expect(toAppError(new SimError('POSITION_NOT_FOUND', 'x')).code).toBe('not_found');
    expect(toAppError(new SimError('INVALID_STOPS', 'x')).code).toBe('invalid_request');
    expect(toAppError(new SimError('NOT_ENOUGH_MONEY', 'x')).code).toBe('upstream_error');
    expect(toAppError(new Error('boom')).code).toBe('internal_error');
  });

  it('creates adapters for known sim accounts only', async () => {
    const broker = new SimBroker();
    const acc = broker.createAccount({ balance: 100 });
    const factory = createSimAdapterFactory(broker, { timeoutMs: TIMEOUT_MS });
    expect(factory.platform).toBe('sim');
    const adapter = await factory.create({
      id: 'acc_1',
      brokerAccountId: acc.id,
      environment: null,
      credentials: null,
    });
    expect((await adapter.accountInfo()).balance.toString()).toBe('100');
    await expect(
      factory.create({ id: 'acc_2', brokerAccountId: 'nope', environment: null, credentials: null }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
