import type { BrokerAdapter, OrderOutcome } from '../platforms/adapter.js';

/**
 * What the Master's broker says about one of our order-route writes, found by its tag. `absent` is a proof
 * (the broker answered and holds nothing with the tag); `unknown` is no proof either way (no answer, or an
 * order that arrived but has not reached a final state).
 */
export type MasterLookup =
  | { kind: 'confirmed'; outcome: OrderOutcome & { kind: 'confirmed' } }
  | { kind: 'rejected'; outcome: OrderOutcome & { kind: 'rejected' } }
  | { kind: 'absent' }
  | { kind: 'unknown'; reason: string };

export async function lookupMasterWrite(adapter: BrokerAdapter, tag: string): Promise<MasterLookup> {
  let found: Awaited<ReturnType<BrokerAdapter['findByTag']>>;
  try {
    found = await adapter.findByTag(tag);
  } catch (err) {
    return { kind: 'unknown', reason: err instanceof Error ? err.message : String(err) };
  }
  if (found.position) {
    const p = found.position;
    return {
      kind: 'confirmed',
      outcome: {
        kind: 'confirmed',
        brokerOrderId: found.order?.id ?? null,
        positionId: p.id,
        filledVolume: p.volume,
        fillPrice: p.openPrice,
        brokerTime: p.openedAt,
      },
    };
  }
  const order = found.order;
  if (!order)
    return found.found
      ? { kind: 'unknown', reason: 'the broker knows the tag but returned no order or position' }
      : { kind: 'absent' };
  // Finding the order proves it arrived, not that it filled: only a fill (or a resting pending order) is a
  // Master trade to copy. A market order the broker cancelled or rejected after the timeout copies nothing.
  if (order.status === 'filled' || (order.status === 'pending' && order.type !== 'market')) {
    return {
      kind: 'confirmed',
      outcome: {
        kind: 'confirmed',
        brokerOrderId: order.id,
        positionId: order.positionId,
        filledVolume: order.filledVolume,
        fillPrice: order.price,
        brokerTime: order.createdAt,
      },
    };
  }
  if (order.status === 'cancelled' || order.status === 'rejected') {
    return {
      kind: 'rejected',
      outcome: {
        kind: 'rejected',
        code: `order_${order.status}`,
        message: `the broker ${order.status} the order after the timeout`,
      },
    };
  }
  return { kind: 'unknown', reason: `the order is ${order.status} at the broker` };
}
