import type { Order } from '../../domain/types.js';
import type { RejectedOutcome } from '../adapter.js';
import { rejected } from '../adapter.js';

/**
 * A refused DELETE /trade/orders/{id} that may only mean "no longer pending": the real server answers a delete of an
 * order that has filled with a 2xx and `s` other than "ok" (the official client's test suite deletes a filled limit
 * order and expects neither an HTTP error nor success), mapped to `broker_rejected`; an id it does not know is a 404
 * (`not_found`). Either way the order's own state, read back, says what happened.
 */
export function mayBeNoLongerPending(refusal: RejectedOutcome): boolean {
  return refusal.code === 'broker_rejected' || refusal.code === 'not_found';
}

/**
 * The outcome of a refused cancel, given the order as the broker's history shows it (null: not there, or the read
 * failed). A fill is `order_filled` with its position, so a caller following the fill links it; an order cancelled
 * or rejected before, or unknown, is `order_not_found`, the code the engine closes an order link on (as the cTrader
 * and simulator adapters answer); an order still pending keeps the broker's own refusal.
 */
export function cancelRefusal(orderId: string, refusal: RejectedOutcome, order: Order | null): RejectedOutcome {
  const answer = refusal.raw;
  if (order?.filledVolume.gt(0)) {
    return rejected(
      'order_filled',
      `order ${orderId} had already filled${order.positionId ? ` (position ${order.positionId})` : ''}; nothing was cancelled`,
      { orderId, status: order.status, positionId: order.positionId, answer },
    );
  }
  if (order?.status === 'pending') return refusal;
  if (!order && refusal.code !== 'not_found') return refusal;
  return rejected(
    'order_not_found',
    `order ${orderId} is no longer pending${order ? ` (${order.status})` : ''}: ${refusal.message}`,
    { orderId, status: order?.status ?? null, answer },
  );
}
