import { describe, expect, it } from 'vitest';
import { ExecutionType, OrderStatus, OrderType, TradeSide } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, OrderMsg } from '../../protocols/ctrader/messages.js';
import { OrderView } from './order-view.js';

const order = (
  orderId: string,
  orderStatus: number = OrderStatus.ACCEPTED,
  orderType: number = OrderType.LIMIT,
): OrderMsg => ({
  orderId,
  tradeData: { symbolId: '1', volume: '100000', tradeSide: TradeSide.BUY },
  orderType,
  orderStatus,
});
const ev = (executionType: number, o?: OrderMsg): ExecutionEventMsg => ({
  ctidTraderAccountId: '7',
  executionType,
  ...(o ? { order: o } : {}),
});

/** A view trusted in session 1 holding pending limit order 20. */
function trusted(): OrderView {
  const v = new OrderView();
  v.endRead(v.beginRead(1), [order('20')], 1);
  return v;
}

describe('OrderView', () => {
  it('is not trusted before a read: every order is "read it"', () => {
    const v = new OrderView();
    v.apply(ev(ExecutionType.ORDER_ACCEPTED, order('20')));
    expect(v.get('20', 1)).toBeNull();
  });

  it('after a read, holds what is accepted and drops what is filled, cancelled, expired or rejected', () => {
    const v = trusted();
    expect(v.get('20', 1)).toEqual({ orderType: OrderType.LIMIT, symbolId: '1' });
    v.apply(ev(ExecutionType.ORDER_ACCEPTED, order('21', OrderStatus.ACCEPTED, OrderType.STOP)));
    expect(v.get('21', 1)).toEqual({ orderType: OrderType.STOP, symbolId: '1' });
    v.apply(ev(ExecutionType.ORDER_REPLACED, order('21', OrderStatus.ACCEPTED, OrderType.STOP)));
    expect(v.get('21', 1)).not.toBeNull();
    // A partial fill leaves the order working (status still accepted): an amendment may still reach it.
    v.apply(ev(ExecutionType.ORDER_PARTIAL_FILL, order('21', OrderStatus.ACCEPTED, OrderType.STOP)));
    expect(v.get('21', 1)).not.toBeNull();
    const ends = [
      [ExecutionType.ORDER_FILLED, OrderStatus.FILLED],
      [ExecutionType.ORDER_CANCELLED, OrderStatus.CANCELLED],
      [ExecutionType.ORDER_EXPIRED, OrderStatus.EXPIRED],
      [ExecutionType.ORDER_REJECTED, OrderStatus.REJECTED],
    ] as const;
    for (const [type, status] of ends) {
      v.apply(ev(ExecutionType.ORDER_ACCEPTED, order('22')));
      expect(v.get('22', 1)).not.toBeNull();
      v.apply(ev(type, order('22', status)));
      expect(v.get('22', 1)).toBeNull();
    }
    expect(v.get('20', 1)).not.toBeNull();
  });

  it('is trusted only in the session it was read in', () => {
    const v = trusted();
    expect(v.get('20', 2)).toBeNull();
    expect(v.get('20', null)).toBeNull();
  });

  it('a read that crossed an event of the account, or was sent outside a session, does not make it trusted', () => {
    const crossed = trusted();
    const read = crossed.beginRead(1);
    crossed.apply(ev(ExecutionType.ORDER_CANCELLED, order('20', OrderStatus.CANCELLED)));
    crossed.endRead(read, [order('20')], 1);
    expect(crossed.get('20', 1)).toBeNull();

    const unsent = new OrderView();
    unsent.endRead(unsent.beginRead(null), [order('20')], 1);
    expect(unsent.get('20', 1)).toBeNull();

    const across = new OrderView();
    across.endRead(across.beginRead(1), [order('20')], 2);
    expect(across.get('20', 2)).toBeNull();
  });

  it('an order it cannot read, or an event that ends an order without naming it, leaves it untrusted', () => {
    const v = trusted();
    v.apply({ ...ev(ExecutionType.ORDER_ACCEPTED), order: { orderId: '23' } as unknown as OrderMsg });
    expect(v.get('20', 1)).toBeNull();
    for (const type of [
      ExecutionType.ORDER_FILLED,
      ExecutionType.ORDER_PARTIAL_FILL,
      ExecutionType.ORDER_CANCELLED,
      ExecutionType.ORDER_EXPIRED,
      ExecutionType.ORDER_REJECTED,
    ]) {
      v.endRead(v.beginRead(1), [order('20')], 1);
      expect(v.get('20', 1)).not.toBeNull();
      v.apply(ev(type));
      expect(v.get('20', 1)).toBeNull();
    }
  });

  it('events without an order that end none (a position amended, a deposit, a swap) keep it trusted', () => {
    const v = trusted();
    v.apply(ev(ExecutionType.ORDER_REPLACED));
    v.apply(ev(ExecutionType.DEPOSIT_WITHDRAW));
    v.apply(ev(ExecutionType.SWAP));
    expect(v.get('20', 1)).not.toBeNull();
  });
});
