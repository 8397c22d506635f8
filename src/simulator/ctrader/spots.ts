import { RELATIVE_PRICE_SCALE } from '../../protocols/ctrader/units.js';
import type { SimServerContext } from './context.js';

/** A ProtoOASpotEvent body for one symbol at the simulator's current quote. */
export function spotBody(ctx: SimServerContext, ctid: string, symbol: string): Record<string, unknown> {
  const q = ctx.broker.quote(symbol);
  return {
    ctidTraderAccountId: ctid,
    symbolId: ctx.wire.symbolId(symbol),
    bid: q.bid.mul(RELATIVE_PRICE_SCALE).toFixed(0),
    ask: q.ask.mul(RELATIVE_PRICE_SCALE).toFixed(0),
    timestamp: String(Date.parse(q.time) || Date.now()),
  };
}
