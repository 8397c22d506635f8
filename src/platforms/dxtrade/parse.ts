import { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { Deal, InstrumentSpec, Order, OrderStatus, OrderType, Position, Side } from '../../domain/types.js';

/** DXtrade JSON -> domain types. Quantities stay in units (the spec: "in units (not in lots)"). */

type Obj = Record<string, unknown>;

const bad = (what: string) => new AppError('upstream_error', `DXtrade answer: ${what}`);

function obj(v: unknown, what: string): Obj {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(`${what} is not an object`);
  return v as Obj;
}

/** The spec's list answers wrap the list in one named field (`{positions: [...]}`). */
export function listOf(body: unknown, field: string): Obj[] {
  const v = obj(body, 'body')[field];
  if (!Array.isArray(v)) throw bad(`no ${field} list`);
  return v.map((x, i) => obj(x, `${field}[${i}]`));
}

function str(o: Obj, k: string): string {
  const v = o[k];
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw bad(`field ${k} missing`);
}
function optStr(o: Obj, k: string): string | null {
  const v = o[k];
  return typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null;
}
function dec(o: Obj, k: string): Decimal {
  const d = optDec(o, k);
  if (d === null) throw bad(`field ${k} missing`);
  return d;
}
function optDec(o: Obj, k: string): Decimal | null {
  const v = o[k];
  if (v === null || v === undefined || v === '') return null;
  if (typeof v !== 'number' && typeof v !== 'string') throw bad(`field ${k} is not a number`);
  const d = new Decimal(v);
  if (!d.isFinite()) throw bad(`field ${k} is not finite`);
  return d;
}
function side(o: Obj, k = 'side'): Side {
  const s = str(o, k).toUpperCase();
  if (s === 'BUY') return 'buy';
  if (s === 'SELL') return 'sell';
  throw bad(`side ${s}`);
}
function time(o: Obj, k: string): string {
  const v = o[k];
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(ms)) throw bad(`field ${k} is not a time`);
  return new Date(ms).toISOString();
}

export function parseLogin(body: unknown): { token: string; timeoutMs: number | null } {
  const o = obj(body, 'login answer');
  const t = o.timeout;
  // dxRegister's login answers `timeout` in milliseconds; a "HH:MM:SS" interval is read too (spec's time format).
  let timeoutMs: number | null = null;
  if (typeof t === 'number' && t > 0) timeoutMs = t;
  else if (typeof t === 'string' && /^\d+:\d{2}:\d{2}$/.test(t)) {
    const [h, m, s] = t.split(':').map(Number) as [number, number, number];
    timeoutMs = ((h * 60 + m) * 60 + s) * 1000;
  }
  return { token: str(o, 'sessionToken'), timeoutMs };
}

export interface DxAccountRef {
  account: string;
  currency: string;
  /** `isPositionBased`: one position per fill (hedging); absent or false nets per instrument. */
  hedging: boolean;
}

export function parseUser(body: unknown): DxAccountRef[] {
  const users = listOf(body, 'userDetails');
  return users.flatMap((u) =>
    (Array.isArray(u.accounts) ? u.accounts : []).map((a) => {
      const o = obj(a, 'account');
      return { account: str(o, 'account'), currency: str(o, 'baseCurrency'), hedging: o.isPositionBased === true };
    }),
  );
}

export function parseMetrics(body: unknown): { balance: Decimal; equity: Decimal } {
  const m = listOf(body, 'metrics')[0];
  if (!m) throw bad('no account metrics');
  return { balance: dec(m, 'balance'), equity: dec(m, 'equity') };
}

/**
 * An instrument's spec at the port, in lots: the server sizes orders in units, `lotSize` of them to a lot (the
 * engine sizes copies in lots).
 */
export function parseInstrument(general: unknown, details: unknown, symbol: string): InstrumentSpec | null {
  const g = listOf(general, 'instruments').find((i) => i.symbol === symbol);
  const d = listOf(details, 'instruments').find((i) => i.symbol === symbol);
  if (!g || !d) return null;
  const lot = dec(g, 'lotSize');
  const max = d.maxOrderSize;
  return {
    symbol,
    tickSize: dec(g, 'priceIncrement'),
    contractSize: lot,
    minVolume: dec(d, 'minOrderSize').div(lot),
    // A Limit value may be an object with its own `value` (unconfirmed); a plain number is read as is.
    maxVolume: (max && typeof max === 'object' ? dec(max as Obj, 'value') : dec(d, 'maxOrderSize')).div(lot),
    volumeStep: dec(d, 'minOrderSizeIncrement').div(lot),
  };
}

export function parsePosition(o: Obj): Position {
  return {
    id: str(o, 'positionCode'),
    symbol: str(o, 'symbol'),
    side: side(o),
    volume: dec(o, 'quantity'),
    openPrice: dec(o, 'openPrice'),
    currentPrice: null,
    stopLoss: null,
    takeProfit: null,
    profit: null,
    openedAt: time(o, 'openTime'),
    tag: null,
  };
}

const STATUS: Record<string, OrderStatus> = {
  WORKING: 'pending',
  PARTIALLY_FILLED: 'pending',
  PENDING: 'pending',
  COMPLETED: 'filled',
  FILLED: 'filled',
  CANCELLED: 'cancelled',
  EXPIRED: 'cancelled',
  REJECTED: 'rejected',
};

export interface DxOrder {
  order: Order;
  /** The server's orderCode (the DELETE path segment) and version (the If-Match of a PUT or DELETE). */
  orderCode: string;
  version: string;
  positionEffect: 'OPEN' | 'CLOSE' | null;
  averagePrice: Decimal | null;
  executions: Array<{ id: string; quantity: Decimal; price: Decimal | null; time: string }>;
}

export function parseOrder(o: Obj): DxOrder {
  const leg = obj(Array.isArray(o.legs) ? o.legs[0] : null, 'order leg');
  const type = str(o, 'type').toUpperCase();
  const t: OrderType = type === 'LIMIT' ? 'limit' : type === 'STOP' ? 'stop' : 'market';
  const status = STATUS[str(o, 'status').toUpperCase()];
  if (!status) throw bad(`order status ${String(o.status)}`);
  const effect = optStr(leg, 'positionEffect')?.toUpperCase() ?? null;
  const executions = (Array.isArray(o.executions) ? o.executions : [])
    .map((e) => obj(e, 'execution'))
    .filter((e) => (optDec(e, 'lastQuantity') ?? new Decimal(0)).abs().gt(0))
    .map((e) => ({
      id: str(e, 'executionCode'),
      quantity: dec(e, 'lastQuantity').abs(),
      price: optDec(e, 'lastPrice'),
      time: time(e, 'transactionTime'),
    }));
  const orderCode = str(o, 'orderCode');
  return {
    order: {
      id: orderCode,
      symbol: str(o, 'instrument'),
      side: side(leg),
      type: t,
      volume: optDec(leg, 'quantity') ?? new Decimal(0),
      filledVolume: optDec(leg, 'filledQuantity') ?? new Decimal(0),
      price: t === 'limit' ? optDec(o, 'limitPrice') : t === 'stop' ? optDec(o, 'stopPrice') : null,
      stopLoss: null,
      takeProfit: null,
      status,
      positionId: optStr(leg, 'positionCode'),
      createdAt: time(o, 'issueTime'),
      updatedAt: time(o, 'transactionTime'),
      tag: optStr(o, 'clientOrderId'),
    },
    orderCode,
    version: str(o, 'version'),
    positionEffect: effect === 'OPEN' || effect === 'CLOSE' ? effect : null,
    averagePrice: optDec(leg, 'averagePrice'),
    executions,
  };
}

/** One execution of an order as the port's deal; `entry` from the leg's position effect. */
export function dealOf(o: DxOrder, e: DxOrder['executions'][number], tag: string | null): Deal {
  return {
    id: e.id,
    orderId: o.order.id,
    positionId: o.order.positionId ?? '',
    symbol: o.order.symbol,
    side: o.order.side,
    volume: e.quantity,
    price: e.price,
    entry: o.positionEffect === 'CLOSE' ? 'out' : 'in',
    time: e.time,
    tag,
    // An execution carries no realized profit: the history computes it from prices.
    profit: null,
    swap: null,
    commission: null,
  };
}
