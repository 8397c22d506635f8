import type { Order, Position } from '../domain/types.js';
import type { TagLookup } from './adapter.js';

/**
 * What a single `findByTag` answers, for every tag at once: a position carrying the tag first, else a pending
 * order, else the last history order carrying it (callers pass history oldest first, so the newest wins).
 * Built from one read of positions, pending orders and history, so settling a burst of unresolved writes costs
 * a few broker requests per account instead of a few per write.
 */
export function indexTags(
  positions: Position[],
  pending: Order[],
  history: Order[],
  /** Where the platform's findByTag also names the order that opened a found position (cTrader). */
  opts: { orderWithPosition?: boolean } = {},
): Map<string, TagLookup> {
  const index = new Map<string, TagLookup>();
  for (const order of history) if (order.tag) index.set(order.tag, { found: true, order });
  for (const order of pending) if (order.tag) index.set(order.tag, { found: true, order });
  for (const position of positions) {
    if (!position.tag) continue;
    const order = opts.orderWithPosition ? index.get(position.tag)?.order : undefined;
    index.set(position.tag, { found: true, position, ...(order ? { order } : {}) });
  }
  return index;
}
