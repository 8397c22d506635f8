import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import type { Order } from '../../domain/types.js';
import { rejected } from '../adapter.js';
import { cancelRefusal, mayBeNoLongerPending } from './cancel-refusal.js';

const order = (o: Partial<Order>): Order =>
  ({
    id: 'o1',
    symbol: 'EURUSD',
    side: 'buy',
    type: 'limit',
    volume: dec('0.1'),
    filledVolume: dec('0'),
    price: dec('1.08'),
    status: 'pending',
    positionId: null,
    ...o,
  }) as Order;

const envelope = rejected('broker_rejected', 'Order o1 is Filled', { s: 'error', errmsg: 'Order o1 is Filled' });
const notFound = rejected('not_found', 'TradeLocker cancel order: Not found', { status: 404 });

describe('cancelRefusal: what a refused TradeLocker cancel means', () => {
  it('only a 2xx refusal or a 404 may mean the order is no longer pending', () => {
    expect(mayBeNoLongerPending(envelope)).toBe(true);
    expect(mayBeNoLongerPending(notFound)).toBe(true);
    expect(mayBeNoLongerPending(rejected('rate_limited', 'slow down'))).toBe(false);
  });

  it('a filled order (wholly or in part) is order_filled with its position and the answer kept', () => {
    const filled = order({ status: 'filled', filledVolume: dec('0.1'), positionId: 'p7' });
    expect(cancelRefusal('o1', envelope, filled)).toMatchObject({
      kind: 'rejected',
      code: 'order_filled',
      raw: { orderId: 'o1', positionId: 'p7', answer: { s: 'error' } },
    });
    const part = order({ status: 'cancelled', filledVolume: dec('0.04'), positionId: 'p8' });
    expect(cancelRefusal('o1', envelope, part).code).toBe('order_filled');
  });

  it('cancelled before, or unknown after a 404, is order_not_found; a still pending order keeps the refusal', () => {
    expect(cancelRefusal('o1', envelope, order({ status: 'cancelled' })).code).toBe('order_not_found');
    expect(cancelRefusal('o1', notFound, null).code).toBe('order_not_found');
    expect(cancelRefusal('o1', envelope, order({}))).toBe(envelope);
    // A 2xx refusal of an order the history does not show is the broker's refusal, not a claim we cannot back.
    expect(cancelRefusal('o1', envelope, null)).toBe(envelope);
  });
});
