import { Decimal } from '../domain/decimal.js';
import type { Deal, Position, Side } from '../domain/types.js';

/**
 * A Master position whose whole life lies in the deals read since the cursor: opened and closed again while no
 * watch saw it. The broker's current state no longer shows it, so only its deals prove it happened.
 */
export interface ClosedInGap {
  /** The position as its first deal opened it. */
  position: Position;
  /** After each later deal, oldest first: the position's volume (zero at the last), when and at what price. */
  steps: Array<{ volume: Decimal; at: string; price: Decimal | null }>;
}

/**
 * The positions opened at or after `since` and closed to zero within `deals` (oldest first), in the order they
 * opened. A position still open, or one whose first deal in the window is not its opening (it opened before the
 * window, so a watch saw it and the store knows it), is left to the start diff.
 */
export function closedInGap(deals: readonly Deal[], since: number): ClosedInGap[] {
  const byPosition = new Map<string, Deal[]>();
  for (const d of deals) {
    const list = byPosition.get(d.positionId);
    if (list) list.push(d);
    else byPosition.set(d.positionId, [d]);
  }
  const out: Array<ClosedInGap & { openedMs: number }> = [];
  for (const [positionId, list] of byPosition) {
    const first = list[0]!;
    const openedMs = Date.parse(first.time);
    if (first.entry !== 'in' || !(openedMs >= since)) continue;
    const steps = lifeOf(list);
    if (!steps) continue;
    out.push({
      openedMs,
      steps,
      position: {
        id: positionId,
        symbol: first.symbol,
        side: first.side,
        volume: first.volume,
        openPrice: first.price ?? new Decimal(0),
        currentPrice: first.price,
        stopLoss: null,
        takeProfit: null,
        profit: null,
        openedAt: first.time,
        tag: list.find((d) => d.entry === 'in' && d.tag)?.tag ?? null,
      },
    });
  }
  return out.sort((a, b) => a.openedMs - b.openedMs).map(({ openedMs: _, ...t }) => t);
}

/** The position's volume after each deal but the first, up to the one that took it to zero; null while any is open. */
function lifeOf(list: readonly Deal[]): ClosedInGap['steps'] | null {
  const side: Side = list[0]!.side;
  let open = list[0]!.volume;
  const steps: ClosedInGap['steps'] = [];
  for (const d of list.slice(1)) {
    // A deal in the position's own direction adds to it, the other direction takes from it (in/out says the same
    // where the broker marks it; the direction also covers a netting account's reversal).
    open = d.entry === 'in' && d.side === side ? open.plus(d.volume) : open.minus(d.volume);
    steps.push({ volume: Decimal.max(open, 0), at: d.time, price: d.price });
    if (open.lte(0)) return steps;
  }
  return null;
}
