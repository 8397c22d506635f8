import { type Decimal, dec } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { InstrumentSpec, Order, OrderStatus, OrderType, Position, Side } from '../../domain/types.js';
import type { TokenPair } from './raw-client.js';

/**
 * Pure parsers of TradeLocker payloads. Row columns are always found by their id from /trade/config, never
 * by position: the docs promise only the names, and brokers may serve them in another order.
 * Ids stay strings (they exceed 2^53).
 */

export type ColumnIndex = ReadonlyMap<string, number>;

export interface RateLimitRule {
  rateLimitType: string;
  limit: number;
  intervalMs: number;
}

export interface TradeConfig {
  positions: ColumnIndex;
  orders: ColumnIndex;
  ordersHistory: ColumnIndex;
  filledOrders: ColumnIndex;
  accountDetails: ColumnIndex;
  rateLimits: RateLimitRule[];
}

export interface InstrumentRef {
  tradableInstrumentId: number;
  symbol: string;
  tradeRouteId: number;
  infoRouteId: number;
}

export interface TlAccountListing {
  id: string;
  accNum: number;
  name: string;
  currency: string;
  balance: Decimal;
}

export interface ParsedPosition {
  position: Position;
  tradableInstrumentId: number;
  stopLossId: string | null;
  takeProfitId: string | null;
}

export interface ParsedOrder {
  order: Order;
  tradableInstrumentId: number;
  /** Fill price (avgPrice column). */
  avgPrice: Decimal | null;
  /** Price that triggers a stop order (the SL level when this is a protective stop). */
  stopPrice: Decimal | null;
  /** Raw limit price column (the TP level when this is a protective limit). */
  limitPrice: Decimal | null;
  rawStatus: string;
}

/**
 * One row of /executions, read by the filledOrdersConfig column ids. The official client (tradelocker-python,
 * ExecutionsColumns) knows eight: id, price, side, createdDate, qty, orderId, positionId, tradableInstrumentId.
 * There is no open/close column and no strategyId: whether a fill opened or closed its position is derived by
 * the adapter, and the tag comes from the order's history row.
 */
export interface ParsedExecution {
  id: string;
  orderId: string | null;
  positionId: string;
  tradableInstrumentId: number;
  side: Side;
  /** Lots, as positions report qty. */
  qty: Decimal;
  price: Decimal | null;
  /** createdDate, epoch ms. */
  timeMs: number;
}

const bad = (msg: string) => new AppError('upstream_error', `TradeLocker: ${msg}`);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The payload of a `{s:"ok", d}` envelope; tolerates answers that carry the payload bare. */
export function unwrap(body: unknown): Record<string, unknown> {
  if (isObj(body) && 'd' in body) {
    if (isObj(body.d)) return body.d;
    if (Array.isArray(body.d)) return { list: body.d };
  }
  if (isObj(body)) return body;
  throw bad('unexpected response shape');
}

function num(v: unknown, what: string): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw bad(`${what} is not a number`);
  return n;
}

function decimal(v: unknown): Decimal | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  try {
    const d = dec(typeof v === 'number' ? String(v) : v);
    return d.isFinite() ? d : null;
  } catch {
    return null;
  }
}

function msToIso(v: string | null, fallback: string): string {
  if (v === null || !/^\d+$/.test(v)) return fallback;
  return new Date(Number(v)).toISOString();
}

export function columnIndex(panel: unknown, name: string): ColumnIndex {
  const cols = isObj(panel) ? panel.columns : undefined;
  if (!Array.isArray(cols)) throw bad(`/trade/config has no ${name}.columns`);
  const m = new Map<string, number>();
  cols.forEach((c, i) => {
    const id = isObj(c) ? c.id : undefined;
    if (typeof id === 'string' && !m.has(id)) m.set(id, i);
  });
  return m;
}

function requireColumns(idx: ColumnIndex, name: string, ids: string[]): void {
  const missing = ids.filter((id) => !idx.has(id));
  if (missing.length > 0) throw bad(`${name} lacks column(s) ${missing.join(', ')}`);
}

export function parseTradeConfig(body: unknown): TradeConfig {
  const d = unwrap(body);
  const cfg: TradeConfig = {
    positions: columnIndex(d.positionsConfig, 'positionsConfig'),
    orders: columnIndex(d.ordersConfig, 'ordersConfig'),
    ordersHistory: columnIndex(d.ordersHistoryConfig ?? d.ordersConfig, 'ordersHistoryConfig'),
    filledOrders: columnIndex(d.filledOrdersConfig ?? { columns: [] }, 'filledOrdersConfig'),
    accountDetails: columnIndex(d.accountDetailsConfig, 'accountDetailsConfig'),
    rateLimits: parseRateLimits(d.rateLimits),
  };
  requireColumns(cfg.positions, 'positionsConfig', ['id', 'tradableInstrumentId', 'side', 'qty', 'avgPrice']);
  requireColumns(cfg.orders, 'ordersConfig', ['id', 'tradableInstrumentId', 'qty', 'side', 'type', 'status']);
  requireColumns(cfg.ordersHistory, 'ordersHistoryConfig', [
    'id',
    'tradableInstrumentId',
    'qty',
    'side',
    'type',
    'status',
  ]);
  requireColumns(cfg.accountDetails, 'accountDetailsConfig', ['balance']);
  return cfg;
}

export function parseRateLimits(v: unknown): RateLimitRule[] {
  if (!Array.isArray(v)) return [];
  const out: RateLimitRule[] = [];
  for (const e of v) {
    if (!isObj(e) || typeof e.rateLimitType !== 'string') continue;
    const limit = Number(e.limit);
    const n = Number(e.intervalNum ?? 1);
    const unit = e.measure === 'MINUTES' ? 60_000 : e.measure === 'HOURS' ? 3_600_000 : 1000;
    if (!(limit > 0) || !(n > 0)) continue;
    out.push({ rateLimitType: e.rateLimitType, limit, intervalMs: n * unit });
  }
  return out;
}

/** One cell by column id; values arrive as strings (or null), numbers are turned into strings. */
export function cell(row: unknown, cols: ColumnIndex, id: string): string | null {
  const i = cols.get(id);
  if (i === undefined || !Array.isArray(row)) return null;
  const v = row[i];
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : String(v);
}

const idOrNull = (v: string | null) => (v === null || v === '' || v === '0' ? null : v);

function side(v: string | null): Side {
  const s = v?.toLowerCase();
  if (s === 'buy' || s === 'sell') return s;
  throw bad(`unknown side ${String(v)}`);
}

function orderType(v: string | null): OrderType {
  const t = v?.toLowerCase();
  if (t === 'market' || t === 'limit' || t === 'stop') return t;
  throw bad(`unknown order type ${String(v)}`);
}

/** Status vocabulary from the fact sheet; unknown words fall back on isOpen. */
export function orderStatus(raw: string | null, isOpen: string | null): OrderStatus {
  switch ((raw ?? '').toLowerCase()) {
    case 'new':
    case 'pending':
    case 'partiallyfilled':
    case 'placing':
      return 'pending';
    case 'filled':
      return 'filled';
    case 'cancelled':
    case 'canceled':
    case 'removed':
    case 'expired':
      return 'cancelled';
    case 'refused':
    case 'rejected':
    case 'unplaced':
      return 'rejected';
    default:
      return isOpen === 'true' ? 'pending' : 'cancelled';
  }
}

export function parsePositionRow(row: unknown, cols: ColumnIndex, symbolOf: (tid: number) => string): ParsedPosition {
  const c = (id: string) => cell(row, cols, id);
  const id = c('id');
  if (!id) throw bad('position row without id');
  const tid = num(c('tradableInstrumentId'), 'tradableInstrumentId');
  const volume = decimal(c('qty'));
  const openPrice = decimal(c('avgPrice'));
  if (!volume || !openPrice) throw bad(`position ${id} lacks qty or avgPrice`);
  const tag = c('strategyId');
  return {
    tradableInstrumentId: tid,
    stopLossId: idOrNull(c('stopLossId')),
    takeProfitId: idOrNull(c('takeProfitId')),
    position: {
      id,
      symbol: symbolOf(tid),
      side: side(c('side')),
      volume,
      openPrice,
      currentPrice: null,
      stopLoss: null,
      takeProfit: null,
      profit: decimal(c('unrealizedPl')),
      openedAt: msToIso(c('openDate'), new Date(0).toISOString()),
      tag: tag ? tag : null,
    },
  };
}

export function parseOrderRow(row: unknown, cols: ColumnIndex, symbolOf: (tid: number) => string): ParsedOrder {
  const c = (id: string) => cell(row, cols, id);
  const id = c('id');
  if (!id) throw bad('order row without id');
  const tid = num(c('tradableInstrumentId'), 'tradableInstrumentId');
  const type = orderType(c('type'));
  const limitPrice = decimal(c('price'));
  const stopPrice = decimal(c('stopPrice'));
  const positive = (d: Decimal | null) => (d && d.gt(0) ? d : null);
  const createdAt = msToIso(c('createdDate'), new Date(0).toISOString());
  const tag = c('strategyId');
  const rawStatus = c('status') ?? '';
  return {
    tradableInstrumentId: tid,
    avgPrice: positive(decimal(c('avgPrice'))),
    stopPrice: positive(stopPrice),
    limitPrice: positive(limitPrice),
    rawStatus,
    order: {
      id,
      symbol: symbolOf(tid),
      side: side(c('side')),
      type,
      volume: decimal(c('qty')) ?? dec(0),
      filledVolume: decimal(c('filledQty')) ?? dec(0),
      price: type === 'limit' ? positive(limitPrice) : type === 'stop' ? positive(stopPrice) : null,
      stopLoss: positive(decimal(c('stopLoss'))),
      takeProfit: positive(decimal(c('takeProfit'))),
      status: orderStatus(rawStatus, c('isOpen')),
      positionId: idOrNull(c('positionId')),
      createdAt,
      updatedAt: msToIso(c('lastModified'), createdAt),
      tag: tag ? tag : null,
    },
  };
}

/** The execution columns listDeals cannot do without; checked when deals are asked for, not at connect. */
export function checkExecutionColumns(cols: ColumnIndex): void {
  requireColumns(cols, 'filledOrdersConfig', [
    'id',
    'side',
    'qty',
    'createdDate',
    'positionId',
    'tradableInstrumentId',
  ]);
}

export function parseExecutionRow(row: unknown, cols: ColumnIndex): ParsedExecution {
  const c = (id: string) => cell(row, cols, id);
  const id = c('id');
  if (!id) throw bad('execution row without id');
  const positionId = idOrNull(c('positionId'));
  if (!positionId) throw bad(`execution ${id} without positionId`);
  const qty = decimal(c('qty'));
  if (!qty || qty.lte(0)) throw bad(`execution ${id} lacks qty`);
  const created = c('createdDate');
  if (created === null || !/^\d+$/.test(created)) throw bad(`execution ${id} lacks createdDate`);
  const price = decimal(c('price'));
  return {
    id,
    orderId: idOrNull(c('orderId')),
    positionId,
    tradableInstrumentId: num(c('tradableInstrumentId'), 'tradableInstrumentId'),
    side: side(c('side')),
    qty,
    price: price?.gt(0) ? price : null,
    timeMs: Number(created),
  };
}

export function rowsOf(body: unknown, key: string): unknown[] {
  const d = unwrap(body);
  const rows = d[key];
  if (rows === undefined || rows === null) return [];
  if (!Array.isArray(rows)) throw bad(`${key} is not a list`);
  return rows;
}

/** accountDetailsData values are JSON numbers keyed by accountDetailsConfig ids. */
export function parseAccountDetails(body: unknown, cols: ColumnIndex): Map<string, Decimal> {
  const data = unwrap(body).accountDetailsData;
  if (!Array.isArray(data)) throw bad('state without accountDetailsData');
  const out = new Map<string, Decimal>();
  for (const [id, i] of cols) {
    const d = decimal(data[i] as unknown);
    if (d) out.set(id, d);
  }
  return out;
}

export function parseInstruments(body: unknown): InstrumentRef[] {
  const out: InstrumentRef[] = [];
  const seen = new Set<string>();
  for (const it of rowsOf(body, 'instruments')) {
    if (!isObj(it) || typeof it.name !== 'string') continue;
    const routes = Array.isArray(it.routes) ? it.routes.filter(isObj) : [];
    const route = (t: string) => routes.find((r) => r.type === t)?.id;
    const trade = route('TRADE');
    const info = route('INFO');
    // Duplicate names exist on real servers; the first listed wins, as the official client does.
    if (trade === undefined || info === undefined || seen.has(it.name)) continue;
    seen.add(it.name);
    out.push({
      tradableInstrumentId: num(it.tradableInstrumentId, 'tradableInstrumentId'),
      symbol: it.name,
      tradeRouteId: num(trade, 'routeId'),
      infoRouteId: num(info, 'routeId'),
    });
  }
  return out;
}

function firstRange(v: unknown, key: string): Decimal | null {
  if (typeof v === 'number' || typeof v === 'string') return decimal(v);
  if (!Array.isArray(v)) return null;
  const ranges = v.filter(isObj).sort((a, b) => Number(a.leftRangeLimit ?? 0) - Number(b.leftRangeLimit ?? 0));
  return ranges.length > 0 ? decimal(ranges[0]![key] as unknown) : null;
}

export function parseInstrumentDetails(body: unknown, symbol: string): InstrumentSpec {
  const d = unwrap(body);
  const step = decimal(d.lotStep as unknown);
  const min = decimal(d.minLot as unknown) ?? step;
  const size = decimal(d.lotSize as unknown);
  const tick = firstRange(d.tickSize, 'tickSize');
  if (!step || !min || !size || !tick) throw bad(`instrument ${symbol} lacks lotStep/minLot/lotSize/tickSize`);
  return {
    symbol,
    volumeStep: step,
    minVolume: min,
    // maxLot may be null on real servers: "no limit" is the honest reading.
    maxVolume: decimal(d.maxLot as unknown) ?? dec('1e9'),
    contractSize: size,
    tickSize: tick,
  };
}

export function parseTokenPair(body: unknown): TokenPair {
  const d = isObj(body) && isObj(body.d) ? body.d : body;
  if (!isObj(d) || typeof d.accessToken !== 'string' || typeof d.refreshToken !== 'string')
    throw bad('sign-in answer without tokens');
  return {
    accessToken: d.accessToken,
    refreshToken: d.refreshToken,
    expireDate: typeof d.expireDate === 'string' ? d.expireDate : '',
  };
}

export function parseAllAccounts(body: unknown): TlAccountListing[] {
  const d = isObj(body) && isObj(body.d) ? body.d : body;
  const list = isObj(d) ? d.accounts : undefined;
  if (!Array.isArray(list)) throw bad('all-accounts answer without accounts');
  return list.filter(isObj).map((a) => ({
    id: String(a.id),
    accNum: num(a.accNum, 'accNum'),
    name: typeof a.name === 'string' ? a.name : String(a.id),
    currency: typeof a.currency === 'string' ? a.currency : '',
    balance: decimal(a.accountBalance as unknown) ?? dec(0),
  }));
}

/** expireDate (ISO) or, failing that, the JWT `exp` claim; null when neither is readable. */
export function tokenExpiryMs(pair: TokenPair): number | null {
  const t = Date.parse(pair.expireDate);
  if (!Number.isNaN(t)) return t;
  const part = pair.accessToken.split('.')[1];
  if (!part) return null;
  try {
    const exp = (JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : null;
  } catch {
    return null;
  }
}
