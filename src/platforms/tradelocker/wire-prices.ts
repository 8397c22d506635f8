import type { Decimal } from '../../domain/decimal.js';
import { dec } from '../../domain/decimal.js';
import type { OrderOutcome } from '../adapter.js';
import { denied } from '../adapter.js';

type Levels = { price?: number; stopLoss?: number; takeProfit?: number };

/**
 * Prices go on the wire as JSON numbers, as the official client sends them. A decimal that a double cannot carry
 * exactly (more than 15 significant digits) is refused here rather than sent as a slightly different price.
 * null and undefined both mean "none" and come back as undefined.
 */
export function wirePrices(levels: { [K in keyof Levels]?: Decimal | null }): Levels | { denied: OrderOutcome } {
  const out: Levels = {};
  for (const key of ['price', 'stopLoss', 'takeProfit'] as const) {
    const v = levels[key];
    if (v === null || v === undefined) continue;
    const n = Number(v.toFixed());
    if (!Number.isFinite(n) || !dec(n).eq(v)) {
      return { denied: denied('invalid_price', `${key} ${v.toFixed()} cannot be sent exactly as a JSON number`) };
    }
    out[key] = n;
  }
  return out;
}
