import { Decimal, floorToStep } from '../../domain/decimal.js';
import type { OrderType, Side } from '../../domain/types.js';
import type { SimBrokerApi, SimErrorCode, SimWriteResult } from '../contract.js';
import { ApiError } from './http.js';
import type { MtPlatform } from './registry.js';
import type { CommentStore } from './wire.js';

/** MetaApi's limit on the MT order comment, which stores comment and clientId together (fact sheet A6). */
export const COMMENT_LIMIT = 26;

export interface TradeResult {
  numericCode: number;
  stringCode: string;
  message: string;
  orderId?: string;
  positionId?: string;
}

type Code = [number, string, string];

/** [numericCode, stringCode, message] per platform: MT5 trade return codes, MT4 error codes. */
const CODES: Record<
  MtPlatform,
  Record<'done' | 'placed' | 'partial' | 'noChanges' | 'reject' | 'unknown' | SimErrorCode, Code>
> = {
  mt5: {
    done: [10009, 'TRADE_RETCODE_DONE', 'Request completed'],
    placed: [10008, 'TRADE_RETCODE_PLACED', 'Order placed'],
    partial: [10010, 'TRADE_RETCODE_DONE_PARTIAL', 'Only part of the request was completed'],
    noChanges: [10025, 'TRADE_RETCODE_NO_CHANGES', 'No changes in request'],
    reject: [10006, 'TRADE_RETCODE_REJECT', 'Request rejected'],
    unknown: [
      -11,
      'TRADE_RETCODE_DISCONNECTED_DURING_TRADE',
      'Trade request was sent but connection to the terminal was lost; outcome unknown',
    ],
    UNKNOWN_ACCOUNT: [10013, 'TRADE_RETCODE_INVALID', 'Invalid request'],
    UNKNOWN_SYMBOL: [10013, 'TRADE_RETCODE_INVALID', 'Invalid request: unknown symbol'],
    INVALID_VOLUME: [10014, 'TRADE_RETCODE_INVALID_VOLUME', 'Invalid volume in the request'],
    INVALID_PRICE: [10015, 'TRADE_RETCODE_INVALID_PRICE', 'Invalid price in the request'],
    INVALID_STOPS: [10016, 'TRADE_RETCODE_INVALID_STOPS', 'Invalid stops in the request'],
    NOT_ENOUGH_MONEY: [10019, 'TRADE_RETCODE_NO_MONEY', 'There is not enough money to complete the request'],
    POSITION_NOT_FOUND: [
      10036,
      'TRADE_RETCODE_POSITION_CLOSED',
      'Position with the specified identifier has already been closed',
    ],
    ORDER_NOT_FOUND: [10013, 'TRADE_RETCODE_INVALID', 'Invalid request: order not found'],
    MARKET_CLOSED: [10018, 'TRADE_RETCODE_MARKET_CLOSED', 'Market is closed'],
    REJECTED: [10006, 'TRADE_RETCODE_REJECT', 'Request rejected'],
  },
  mt4: {
    done: [0, 'ERR_NO_ERROR', 'No error returned'],
    placed: [0, 'ERR_NO_ERROR', 'No error returned'],
    partial: [0, 'ERR_NO_ERROR', 'No error returned'],
    noChanges: [0, 'ERR_NO_ERROR', 'No error returned'],
    reject: [2, 'ERR_COMMON_ERROR', 'Common error'],
    unknown: [
      -11,
      'TRADE_RETCODE_DISCONNECTED_DURING_TRADE',
      'Trade request was sent but connection to the terminal was lost; outcome unknown',
    ],
    UNKNOWN_ACCOUNT: [65, 'ERR_INVALID_ACCOUNT', 'Invalid account'],
    UNKNOWN_SYMBOL: [3, 'ERR_INVALID_TRADE_PARAMETERS', 'Invalid trade parameters: unknown symbol'],
    INVALID_VOLUME: [131, 'ERR_INVALID_TRADE_VOLUME', 'Invalid trade volume'],
    INVALID_PRICE: [129, 'ERR_INVALID_PRICE', 'Invalid price'],
    INVALID_STOPS: [130, 'ERR_INVALID_STOPS', 'Invalid stops'],
    NOT_ENOUGH_MONEY: [134, 'ERR_NOT_ENOUGH_MONEY', 'Not enough money'],
    POSITION_NOT_FOUND: [3, 'ERR_INVALID_TRADE_PARAMETERS', 'Invalid trade parameters: no such ticket'],
    ORDER_NOT_FOUND: [3, 'ERR_INVALID_TRADE_PARAMETERS', 'Invalid trade parameters: no such ticket'],
    MARKET_CLOSED: [132, 'ERR_MARKET_CLOSED', 'Market is closed'],
    REJECTED: [2, 'ERR_COMMON_ERROR', 'Common error'],
  },
};

export const resultOf = (
  platform: MtPlatform,
  key: keyof (typeof CODES)['mt5'],
  extra: Partial<TradeResult> = {},
  detail?: string,
): TradeResult => {
  const [numericCode, stringCode, message] = CODES[platform][key];
  return { numericCode, stringCode, message: detail ? `${message}: ${detail}` : message, ...extra };
};

const PLACE: Record<string, { side: Side; type: OrderType }> = {
  ORDER_TYPE_BUY: { side: 'buy', type: 'market' },
  ORDER_TYPE_SELL: { side: 'sell', type: 'market' },
  ORDER_TYPE_BUY_LIMIT: { side: 'buy', type: 'limit' },
  ORDER_TYPE_SELL_LIMIT: { side: 'sell', type: 'limit' },
  ORDER_TYPE_BUY_STOP: { side: 'buy', type: 'stop' },
  ORDER_TYPE_SELL_STOP: { side: 'sell', type: 'stop' },
};

const ALL_ACTIONS = new Set([
  ...Object.keys(PLACE),
  'ORDER_TYPE_BUY_STOP_LIMIT',
  'ORDER_TYPE_SELL_STOP_LIMIT',
  'POSITION_MODIFY',
  'POSITION_PARTIAL',
  'POSITION_CLOSE_ID',
  'POSITION_CLOSE_BY',
  'POSITIONS_CLOSE_SYMBOL',
  'ORDER_MODIFY',
  'ORDER_CANCEL',
]);

export type TradeOp = 'placeOrder' | 'modifyPosition' | 'closePosition' | 'modifyOrder' | 'cancelOrder';

/** Which simulator fault op a trade action consumes; validates actionType first. */
export function tradeOp(body: Record<string, unknown>): TradeOp {
  const a = body.actionType;
  if (typeof a !== 'string' || !ALL_ACTIONS.has(a))
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: 'actionType', message: `unknown actionType ${String(a)}` }],
    });
  if (a.startsWith('ORDER_TYPE_')) return 'placeOrder';
  if (a === 'POSITION_MODIFY') return 'modifyPosition';
  if (a === 'ORDER_MODIFY') return 'modifyOrder';
  if (a === 'ORDER_CANCEL') return 'cancelOrder';
  return 'closePosition';
}

function num(body: Record<string, unknown>, k: string, required: boolean): Decimal | undefined {
  const v = body[k];
  if (v === undefined || v === null) {
    if (required)
      throw new ApiError(400, 'Validation failed', { details: [{ parameter: k, message: `${k} is required` }] });
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw new ApiError(400, 'Validation failed', {
      details: [{ parameter: k, message: `${k} must be a non-negative number` }],
    });
  return new Decimal(v);
}

function id(body: Record<string, unknown>, k: string): string {
  const v = body[k];
  if (typeof v === 'string' && /^\d+$/.test(v)) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  throw new ApiError(400, 'Validation failed', { details: [{ parameter: k, message: `${k} is required` }] });
}

/** Absent keeps the level, 0 removes it (MT's own convention for "no stop"), a price sets it. */
const level = (body: Record<string, unknown>, k: string, current: Decimal | null): Decimal | null => {
  const v = num(body, k, false);
  if (v === undefined) return current;
  return v.isZero() ? null : v;
};

export interface TradeCtx {
  broker: SimBrokerApi;
  simId: string;
  platform: MtPlatform;
  comments: CommentStore;
  partialRatio?: number;
  /** Fault cancel_after_timeout: the order is taken and then cancelled or rejected instead of filled. */
  refuseAs?: 'cancelled' | 'rejected';
}

/** Runs one MetaApi trade request against the simulator; business refusals come back as result codes. */
export function runTrade(ctx: TradeCtx, body: Record<string, unknown>): TradeResult {
  const action = body.actionType as string;
  for (const k of ['stopLossUnits', 'takeProfitUnits', 'openPriceUnits']) {
    if (body[k] !== undefined && body[k] !== 'ABSOLUTE_PRICE')
      throw new ApiError(400, `the simulator supports only ABSOLUTE_PRICE for ${k}`);
  }
  const clientId = typeof body.clientId === 'string' ? body.clientId : '';
  const comment = typeof body.comment === 'string' ? body.comment : '';
  if (clientId.length + comment.length > COMMENT_LIMIT) {
    throw new ApiError(400, 'Validation failed', {
      details: [
        { parameter: 'clientId', message: `comment and clientId together must not exceed ${COMMENT_LIMIT} characters` },
      ],
    });
  }
  const tag = clientId || comment;
  try {
    const result = dispatch(ctx, action, body, tag);
    if (clientId && comment) ctx.comments.set(clientId, comment);
    return result;
  } catch (err) {
    const code = (err as { code?: unknown })?.code;
    if (typeof code === 'string' && code in CODES[ctx.platform])
      return resultOf(ctx.platform, code as SimErrorCode, {}, (err as Error).message);
    throw err;
  }
}

function dispatch(ctx: TradeCtx, action: string, body: Record<string, unknown>, tag: string): TradeResult {
  const { broker, simId, platform } = ctx;
  const place = PLACE[action];
  if (place) {
    if (typeof body.symbol !== 'string')
      throw new ApiError(400, 'Validation failed', {
        details: [{ parameter: 'symbol', message: 'symbol is required' }],
      });
    const volume = num(body, 'volume', true)!;
    const price = place.type === 'market' ? null : num(body, 'openPrice', true)!;
    const r = broker.placeOrder(
      simId,
      {
        symbol: body.symbol,
        side: place.side,
        type: place.type,
        volume,
        price,
        stopLoss: level(body, 'stopLoss', null),
        takeProfit: level(body, 'takeProfit', null),
        tag,
      },
      {
        ...(ctx.partialRatio === undefined ? {} : { partialRatio: ctx.partialRatio }),
        ...(ctx.refuseAs ? { refuseAs: ctx.refuseAs } : {}),
      },
    );
    if (place.type !== 'market' || !r.deal) return resultOf(platform, 'placed', { orderId: r.order.id });
    return filled(platform, r, volume);
  }
  switch (action) {
    case 'POSITION_MODIFY': {
      const pid = id(body, 'positionId');
      const p = broker.positions(simId).find((x) => x.id === pid);
      if (!p) return resultOf(platform, 'POSITION_NOT_FOUND');
      const sl = level(body, 'stopLoss', p.stopLoss);
      const tp = level(body, 'takeProfit', p.takeProfit);
      const same = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));
      if (same(sl, p.stopLoss) && same(tp, p.takeProfit)) return resultOf(platform, 'noChanges', { positionId: pid });
      broker.modifyPosition(simId, pid, { stopLoss: sl, takeProfit: tp });
      return resultOf(platform, 'done', { positionId: pid });
    }
    case 'POSITION_PARTIAL':
    case 'POSITION_CLOSE_ID': {
      const pid = id(body, 'positionId');
      const p = broker.positions(simId).find((x) => x.id === pid);
      if (!p) return resultOf(platform, 'POSITION_NOT_FOUND');
      let volume = action === 'POSITION_PARTIAL' ? num(body, 'volume', true)! : p.volume;
      if (ctx.partialRatio !== undefined) {
        const spec = broker.instrument(p.symbol)!;
        volume = Decimal.max(floorToStep(volume.mul(ctx.partialRatio), spec.volumeStep), spec.minVolume);
      }
      // With a clientId the closing order carries it, as MetaApi stores it on the closing order and deal.
      const r = tag
        ? broker.placeOrder(simId, {
            symbol: p.symbol,
            side: p.side === 'buy' ? 'sell' : 'buy',
            type: 'market',
            volume,
            tag,
            positionId: pid,
          })
        : broker.closePosition(simId, pid, volume);
      return filled(platform, r, action === 'POSITION_PARTIAL' ? num(body, 'volume', true)! : p.volume);
    }
    case 'POSITIONS_CLOSE_SYMBOL': {
      if (typeof body.symbol !== 'string') throw new ApiError(400, 'symbol is required');
      for (const p of broker.positions(simId).filter((x) => x.symbol === body.symbol))
        broker.closePosition(simId, p.id);
      return resultOf(platform, 'done');
    }
    case 'ORDER_MODIFY': {
      const oid = id(body, 'orderId');
      const o = broker.orders(simId).find((x) => x.id === oid);
      if (!o) return resultOf(platform, 'ORDER_NOT_FOUND');
      const price = num(body, 'openPrice', true)!;
      broker.modifyOrder(simId, oid, {
        price,
        stopLoss: level(body, 'stopLoss', o.stopLoss),
        takeProfit: level(body, 'takeProfit', o.takeProfit),
      });
      return resultOf(platform, 'done', { orderId: oid });
    }
    case 'ORDER_CANCEL': {
      const oid = id(body, 'orderId');
      broker.cancelOrder(simId, oid);
      return resultOf(platform, 'done', { orderId: oid });
    }
    default:
      throw new ApiError(400, `actionType ${action} is not supported by the simulator`);
  }
}

function filled(platform: MtPlatform, r: SimWriteResult, asked: Decimal): TradeResult {
  const got = r.deal?.volume ?? asked;
  const key = got.lt(asked) ? 'partial' : 'done';
  const positionId = r.position?.id ?? r.order.positionId ?? undefined;
  return resultOf(platform, key, { orderId: r.order.id, ...(positionId ? { positionId } : {}) });
}
