import { ExecutionType, OrderStatus } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, OrderMsg } from '../../protocols/ctrader/messages.js';
import { SessionView } from './session-view.js';

/** What an amendment needs of a pending order: which price field it sets (its type) and its symbol's lot size. */
export interface OrderTarget {
  orderType: number;
  symbolId: string;
}

/** Events that end or change an order: one that names no order leaves unknown whether a held one is still pending. */
const ORDER_EVENTS: ReadonlySet<number> = new Set([
  ExecutionType.ORDER_FILLED,
  ExecutionType.ORDER_PARTIAL_FILL,
  ExecutionType.ORDER_CANCELLED,
  ExecutionType.ORDER_EXPIRED,
  ExecutionType.ORDER_REJECTED,
]);

/**
 * One account's pending orders as the server last told us, kept like `PositionView` keeps its positions (read its
 * comment: the trust rules are the same) so that an amendment does not read the order first: on a connection's one
 * rate window, an amendment fanned out to N accounts was 2N requests, half of them reconciles.
 *
 * The order in an execution event is its whole state: an order the event says is accepted (pending, or partly
 * filled and still working) is held, any other status (filled, cancelled, expired, rejected) drops it. An order's
 * type and symbol never change, so what an amendment reads here is as true as a read; an order that ended in the
 * round trip before the amendment reaches the server is refused by it, as it was after a read.
 */
export class OrderView extends SessionView<OrderMsg, OrderTarget> {
  protected idOf(o: OrderMsg): string {
    return String(o.orderId);
  }

  protected target(o: OrderMsg): OrderTarget | null | undefined {
    return pendingTarget(o);
  }

  /** Every execution event of the account, in the order received (our own answers included). */
  apply(ev: ExecutionEventMsg): void {
    this.changed();
    const o = ev.order;
    if (!o) {
      if (ORDER_EVENTS.has(ev.executionType)) this.distrust();
      return;
    }
    this.applyOne(o);
  }
}

/** The order's target while it is working, null once it is not, undefined when unreadable. */
function pendingTarget(o: OrderMsg): OrderTarget | null | undefined {
  const id = o?.orderId;
  const symbolId = o?.tradeData?.symbolId;
  if (id === undefined || id === null || symbolId === undefined || symbolId === null) return undefined;
  if (typeof o.orderType !== 'number' || typeof o.orderStatus !== 'number') return undefined;
  if (o.orderStatus !== OrderStatus.ACCEPTED) return null;
  return { orderType: o.orderType, symbolId: String(symbolId) };
}
