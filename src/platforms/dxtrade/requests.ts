import type { Decimal } from '../../domain/decimal.js';
import type { OrderType, Side } from '../../domain/types.js';

/**
 * Bodies of the spec's Single Order Request and Order Group Request. Quantities in units; prices as the spec's
 * numbers (sent as strings so no digit is lost in a double); side and type upper case.
 */
export interface DxSingleOrder {
  orderCode: string;
  type?: 'MARKET' | 'LIMIT' | 'STOP';
  instrument: string;
  quantity?: string;
  positionEffect?: 'OPEN' | 'CLOSE';
  positionCode?: string;
  side: 'BUY' | 'SELL';
  limitPrice?: string;
  stopPrice?: string;
  tif: 'GTC' | 'IOC';
}

export interface DxOrderGroup {
  orders: DxSingleOrder[];
  contingencyType: 'IF-THEN' | 'OCO';
}

export const wireSide = (s: Side): 'BUY' | 'SELL' => (s === 'buy' ? 'BUY' : 'SELL');
export const opposite = (s: Side): 'BUY' | 'SELL' => (s === 'buy' ? 'SELL' : 'BUY');
const wireType = (t: OrderType) => (t === 'limit' ? 'LIMIT' : t === 'stop' ? 'STOP' : 'MARKET');

export function openOrder(o: {
  tag: string;
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  price?: Decimal | null;
  positionBased: boolean;
}): DxSingleOrder {
  const body: DxSingleOrder = {
    orderCode: o.tag,
    type: wireType(o.type),
    instrument: o.symbol,
    quantity: o.volume.toFixed(),
    side: wireSide(o.side),
    tif: o.type === 'market' ? 'IOC' : 'GTC',
  };
  // positionEffect is for position-based trading; a netting account takes plain buys and sells.
  if (o.positionBased) body.positionEffect = 'OPEN';
  if (o.type === 'limit') body.limitPrice = o.price!.toFixed();
  if (o.type === 'stop') body.stopPrice = o.price!.toFixed();
  return body;
}

/**
 * A protection order ("position attached"): CLOSE effect, no quantity, opposite side, GTC only. Stop loss is a STOP,
 * take profit a LIMIT. `positionCode` is absent when it rides as a THEN order of a group (no position exists yet).
 */
export function protection(o: {
  code: string;
  symbol: string;
  positionSide: Side;
  kind: 'sl' | 'tp';
  level: Decimal;
  positionCode?: string;
  replace?: boolean;
}): DxSingleOrder {
  const body: DxSingleOrder = {
    orderCode: o.code,
    instrument: o.symbol,
    positionEffect: 'CLOSE',
    side: opposite(o.positionSide),
    tif: 'GTC',
  };
  // The spec: type "must be omitted in 'Replace' requests".
  if (!o.replace) body.type = o.kind === 'sl' ? 'STOP' : 'LIMIT';
  if (o.positionCode) body.positionCode = o.positionCode;
  if (o.kind === 'sl') body.stopPrice = o.level.toFixed();
  else body.limitPrice = o.level.toFixed();
  return body;
}

/** IF-THEN: the opening order first, its SL/TP as THEN orders that become active once it is filled. */
export function withStops(open: DxSingleOrder, stops: DxSingleOrder[]): DxSingleOrder | DxOrderGroup {
  return stops.length === 0 ? open : { orders: [open, ...stops], contingencyType: 'IF-THEN' };
}

let seq = 0;
/** orderCode of a write that carries no tag of ours (a close, a protection order): unique on the account. */
export function freshCode(prefix: string): string {
  seq = (seq + 1) % 1_000_000;
  return `${prefix}${Date.now().toString(36)}${seq.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}
