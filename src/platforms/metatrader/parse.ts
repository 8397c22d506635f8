import { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { Deal, InstrumentSpec, Order, OrderStatus, OrderType, Position, Side } from '../../domain/types.js';

/**
 * Pure parsers from MetaApi REST models (fact sheet A3-A5) to our types. MetaApi sends prices and volumes
 * as JSON numbers; they become decimals through their shortest decimal text, which is what the broker sent.
 * Ids may arrive as strings or numbers depending on endpoint; they always leave here as strings.
 */

type Obj = Record<string, unknown>;

const bad = (what: string, detail: string) =>
  new AppError('upstream_error', `MetaApi sent an unexpected ${what}: ${detail}`);

export function obj(v: unknown, what: string): Obj {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(what, 'not an object');
  return v as Obj;
}

export function arr(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw bad(what, 'not an array');
  return v;
}

export function decOf(v: unknown, what: string): Decimal {
  if (typeof v === 'number' && Number.isFinite(v)) return new Decimal(String(v));
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return new Decimal(v.trim());
  throw bad(what, `not a number (${JSON.stringify(v)})`);
}

/** SL/TP: absent or 0 means none, as in MT itself. */
export function levelOf(v: unknown, what: string): Decimal | null {
  if (v === undefined || v === null || v === '') return null;
  const d = decOf(v, what);
  return d.isZero() ? null : d;
}

export function idOf(v: unknown, what: string): string {
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  // Numbers past 2^53 have already lost digits in JSON.parse; nothing here can restore them.
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw bad(what, `missing id (${JSON.stringify(v)})`);
}

const optId = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isInteger(v) ? String(v) : null;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function timeOf(v: unknown, what: string): string {
  if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) return new Date(v).toISOString();
  throw bad(what, `not a time (${JSON.stringify(v)})`);
}

/** MetaApi's `magic` (the EA's number; 0 = a manual trade) and `comment` of a position or order, for the rule's filters. */
const origin = (r: Record<string, unknown>) => ({
  magic: typeof r.magic === 'number' && Number.isSafeInteger(r.magic) ? r.magic : null,
  comment: str(r.comment),
});

export function parsePosition(raw: unknown): Position {
  const p = obj(raw, 'position');
  const side: Side | null = p.type === 'POSITION_TYPE_BUY' ? 'buy' : p.type === 'POSITION_TYPE_SELL' ? 'sell' : null;
  if (!side) throw bad('position', `type ${String(p.type)}`);
  if (typeof p.symbol !== 'string') throw bad('position', 'no symbol');
  return {
    id: idOf(p.id, 'position id'),
    symbol: p.symbol,
    side,
    volume: decOf(p.volume, 'position volume'),
    openPrice: decOf(p.openPrice, 'position openPrice'),
    currentPrice: p.currentPrice === undefined ? null : decOf(p.currentPrice, 'position currentPrice'),
    stopLoss: levelOf(p.stopLoss, 'position stopLoss'),
    takeProfit: levelOf(p.takeProfit, 'position takeProfit'),
    profit: p.profit === undefined ? null : decOf(p.profit, 'position profit'),
    openedAt: timeOf(p.time, 'position time'),
    tag: str(p.clientId),
    ...origin(p),
  };
}

const ORDER_TYPES: Record<string, { side: Side; type: OrderType }> = {
  ORDER_TYPE_BUY: { side: 'buy', type: 'market' },
  ORDER_TYPE_SELL: { side: 'sell', type: 'market' },
  ORDER_TYPE_BUY_LIMIT: { side: 'buy', type: 'limit' },
  ORDER_TYPE_SELL_LIMIT: { side: 'sell', type: 'limit' },
  ORDER_TYPE_BUY_STOP: { side: 'buy', type: 'stop' },
  ORDER_TYPE_SELL_STOP: { side: 'sell', type: 'stop' },
  // A stop-limit is a stop that places a limit; for copying it is the stop that matters.
  ORDER_TYPE_BUY_STOP_LIMIT: { side: 'buy', type: 'stop' },
  ORDER_TYPE_SELL_STOP_LIMIT: { side: 'sell', type: 'stop' },
};

const ORDER_STATES: Record<string, OrderStatus> = {
  ORDER_STATE_STARTED: 'pending',
  ORDER_STATE_PLACED: 'pending',
  ORDER_STATE_PARTIAL: 'pending',
  ORDER_STATE_REQUEST_ADD: 'pending',
  ORDER_STATE_REQUEST_MODIFY: 'pending',
  ORDER_STATE_REQUEST_CANCEL: 'pending',
  ORDER_STATE_FILLED: 'filled',
  ORDER_STATE_CANCELED: 'cancelled',
  ORDER_STATE_EXPIRED: 'cancelled',
  ORDER_STATE_REJECTED: 'rejected',
};

/** `pendingList` tells the parser the order came from the open-orders list, where `state` may be missing. */
export function parseOrder(raw: unknown, pendingList = false): Order | null {
  const o = obj(raw, 'order');
  const t = typeof o.type === 'string' ? ORDER_TYPES[o.type] : undefined;
  // CLOSE_BY and other bookkeeping orders have no meaning for copying.
  if (!t) return null;
  if (typeof o.symbol !== 'string') throw bad('order', 'no symbol');
  const status = typeof o.state === 'string' ? ORDER_STATES[o.state] : pendingList ? 'pending' : undefined;
  if (!status) throw bad('order', `state ${String(o.state)}`);
  const volume = decOf(o.volume, 'order volume');
  const current =
    o.currentVolume === undefined
      ? status === 'filled'
        ? new Decimal(0)
        : volume
      : decOf(o.currentVolume, 'order currentVolume');
  const createdAt = timeOf(o.time, 'order time');
  return {
    id: idOf(o.id, 'order id'),
    symbol: o.symbol,
    side: t.side,
    type: t.type,
    volume,
    filledVolume: Decimal.max(volume.minus(current), 0),
    price: t.type === 'market' || o.openPrice === undefined ? null : decOf(o.openPrice, 'order openPrice'),
    stopLoss: levelOf(o.stopLoss, 'order stopLoss'),
    takeProfit: levelOf(o.takeProfit, 'order takeProfit'),
    status,
    positionId: optId(o.positionId),
    createdAt,
    updatedAt: o.doneTime === undefined ? createdAt : timeOf(o.doneTime, 'order doneTime'),
    tag: str(o.clientId),
    ...origin(o),
  };
}

export interface MtDeal {
  id: string;
  /** DEAL_TYPE_BUY / DEAL_TYPE_SELL carry a side; balance, commission and the like do not. */
  side: Side | null;
  entry: 'in' | 'out' | 'inout' | 'out_by' | null;
  symbol: string | null;
  volume: Decimal | null;
  price: Decimal | null;
  profit: Decimal;
  /** Absent on the wire = null: the deal says nothing of it. */
  swap: Decimal | null;
  commission: Decimal | null;
  positionId: string | null;
  orderId: string | null;
  time: string;
  tag: string | null;
}

const ENTRIES: Record<string, MtDeal['entry']> = {
  DEAL_ENTRY_IN: 'in',
  DEAL_ENTRY_OUT: 'out',
  DEAL_ENTRY_INOUT: 'inout',
  DEAL_ENTRY_OUT_BY: 'out_by',
};

export function parseDeal(raw: unknown): MtDeal {
  const d = obj(raw, 'deal');
  return {
    id: idOf(d.id, 'deal id'),
    side: d.type === 'DEAL_TYPE_BUY' ? 'buy' : d.type === 'DEAL_TYPE_SELL' ? 'sell' : null,
    entry: typeof d.entryType === 'string' ? (ENTRIES[d.entryType] ?? null) : null,
    symbol: str(d.symbol),
    volume: d.volume === undefined ? null : decOf(d.volume, 'deal volume'),
    price: d.price === undefined ? null : decOf(d.price, 'deal price'),
    profit: d.profit === undefined ? new Decimal(0) : decOf(d.profit, 'deal profit'),
    swap: d.swap === undefined ? null : decOf(d.swap, 'deal swap'),
    commission: d.commission === undefined ? null : decOf(d.commission, 'deal commission'),
    positionId: optId(d.positionId),
    orderId: optId(d.orderId),
    time: timeOf(d.time, 'deal time'),
    tag: str(d.clientId),
  };
}

/** A deal that moved a position: DEAL_TYPE_BUY/SELL with a known entry, symbol, volume and position. */
export type MtTradeDeal = MtDeal & {
  side: Side;
  entry: NonNullable<MtDeal['entry']>;
  symbol: string;
  volume: Decimal;
  positionId: string;
};

/** Balance, credit, commission, cancelled and other bookkeeping deals move no position and are left out. */
export function isTradeDeal(d: MtDeal): d is MtTradeDeal {
  return d.side !== null && d.entry !== null && d.symbol !== null && d.volume !== null && d.positionId !== null;
}

/** Execution time, then ticket (numerically when both are numbers): MetaApi does not document the row order. */
export function dealOrder(a: MtDeal, b: MtDeal): number {
  const t = Date.parse(a.time) - Date.parse(b.time);
  if (t !== 0) return t;
  if (/^\d+$/.test(a.id) && /^\d+$/.test(b.id))
    return a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Id of the opening half of a split DEAL_ENTRY_INOUT deal; the closing half keeps the broker's ticket. */
export const inoutOpeningId = (dealId: string) => `${dealId}:in`;

/**
 * MetaApi trade deals as our Deals, oldest first. `earlier` are the same account's deals from before the window,
 * read only to know a position's volume before a reversal; they are not returned.
 *
 * DEAL_ENTRY_IN is 'in'; DEAL_ENTRY_OUT and DEAL_ENTRY_OUT_BY (closed by an opposite position) are 'out'.
 * DEAL_ENTRY_INOUT is an MT5 netting reversal: one deal that closes the whole position and opens the rest the
 * other way, on the same position id. It becomes two Deals at the same time, price and side: an 'out' of the
 * volume the position held (replayed from its earlier deals; it keeps the broker's ticket) and an 'in' of the
 * remainder (ticket + ':in'). When the position's opening is not among the deals read, its volume is unknown and
 * the reversal is kept whole as one 'out': a ledger is better off with a close it can see than an invented split.
 */
export function toDeals(rows: readonly MtDeal[], earlier: readonly MtDeal[] = []): Deal[] {
  const seen = new Set<string>();
  const unique = (list: readonly MtDeal[]) =>
    list.filter(isTradeDeal).filter((d) => {
      if (seen.has(d.id)) return false;
      seen.add(d.id);
      return true;
    });
  const before = unique(earlier).sort(dealOrder);
  const window = unique(rows).sort(dealOrder);
  // What each position holds, replayed from its deals; absent = its opening was not read.
  const held = new Map<string, { side: Side; volume: Decimal }>();
  const out: Deal[] = [];
  // The money of a reversal (DEAL_ENTRY_INOUT) is the closing part's: its opening part booked none.
  const deal = (d: MtTradeDeal, entry: Deal['entry'], volume: Decimal, id = d.id, money = true): Deal => ({
    id,
    orderId: d.orderId,
    positionId: d.positionId,
    symbol: d.symbol,
    side: d.side,
    volume,
    price: d.price,
    entry,
    time: d.time,
    tag: d.tag,
    profit: money ? d.profit : new Decimal(0),
    swap: money ? d.swap : null,
    commission: money ? d.commission : null,
  });
  for (const [i, d] of [...before, ...window].entries()) {
    const emit = i >= before.length;
    const h = held.get(d.positionId);
    if (d.entry === 'in') {
      if (h && h.side === d.side) h.volume = h.volume.plus(d.volume);
      else if (!h || h.volume.isZero()) held.set(d.positionId, { side: d.side, volume: d.volume });
      else h.volume = Decimal.max(h.volume.minus(d.volume), 0);
      if (emit) out.push(deal(d, 'in', d.volume));
    } else if (d.entry === 'out' || d.entry === 'out_by') {
      if (h) h.volume = Decimal.max(h.volume.minus(d.volume), 0);
      if (emit) out.push(deal(d, 'out', d.volume));
    } else {
      const closing = h && h.side !== d.side ? Decimal.min(h.volume, d.volume) : null;
      const opening = closing ? d.volume.minus(closing) : null;
      if (closing && opening) held.set(d.positionId, { side: d.side, volume: opening });
      else held.delete(d.positionId);
      if (!emit) continue;
      if (!closing || !opening || closing.isZero() || opening.isZero()) out.push(deal(d, 'out', d.volume));
      else out.push(deal(d, 'out', closing), deal(d, 'in', opening, inoutOpeningId(d.id), false));
    }
  }
  return out;
}

export interface MtAccountInformation {
  platform: 'mt4' | 'mt5';
  broker: string;
  currency: string;
  server: string;
  balance: Decimal;
  equity: Decimal;
  login: string;
  name: string;
  /** MT4 is always hedging; MT5 says so in marginMode. */
  hedging: boolean;
  tradeAllowed: boolean;
  investorMode: boolean;
}

export function parseAccountInformation(raw: unknown): MtAccountInformation {
  const a = obj(raw, 'account information');
  const platform = a.platform === 'mt4' ? 'mt4' : 'mt5';
  if (typeof a.currency !== 'string') throw bad('account information', 'no currency');
  const login = optId(a.login);
  if (!login) throw bad('account information', 'no login');
  return {
    platform,
    broker: str(a.broker) ?? '',
    currency: a.currency,
    server: str(a.server) ?? '',
    balance: decOf(a.balance, 'balance'),
    equity: decOf(a.equity, 'equity'),
    login,
    name: str(a.name) ?? '',
    hedging: platform === 'mt4' || a.marginMode !== 'ACCOUNT_MARGIN_MODE_RETAIL_NETTING',
    tradeAllowed: a.tradeAllowed !== false,
    investorMode: a.investorMode === true,
  };
}

export function parseSymbolSpecification(raw: unknown, symbol: string): InstrumentSpec {
  const s = obj(raw, `specification of ${symbol}`);
  const tickSize =
    s.tickSize !== undefined
      ? decOf(s.tickSize, 'tickSize')
      : typeof s.digits === 'number'
        ? new Decimal(10).pow(-s.digits)
        : null;
  if (!tickSize) throw bad(`specification of ${symbol}`, 'neither tickSize nor digits');
  return {
    symbol: typeof s.symbol === 'string' ? s.symbol : symbol,
    volumeStep: decOf(s.volumeStep, 'volumeStep'),
    minVolume: decOf(s.minVolume, 'minVolume'),
    maxVolume: decOf(s.maxVolume, 'maxVolume'),
    contractSize: decOf(s.contractSize, 'contractSize'),
    tickSize,
  };
}

export interface MtTradeResult {
  numericCode: number;
  stringCode: string;
  message: string;
  orderId: string | null;
  positionId: string | null;
}

/** Accepts the legacy field names the SDK still maps (`error` -> numericCode, `description` -> stringCode). */
export function parseTradeResult(raw: unknown): MtTradeResult {
  const r = obj(raw, 'trade response');
  const numeric = r.numericCode ?? r.error;
  const stringCode = str(r.stringCode) ?? str(r.description);
  const numericCode =
    typeof numeric === 'number'
      ? numeric
      : typeof numeric === 'string' && /^-?\d+$/.test(numeric)
        ? Number(numeric)
        : null;
  if (numericCode === null && stringCode === null) throw bad('trade response', 'no numericCode or stringCode');
  return {
    numericCode: numericCode ?? Number.NaN,
    stringCode: stringCode ?? '',
    message: str(r.message) ?? '',
    orderId: optId(r.orderId),
    positionId: optId(r.positionId),
  };
}

export interface MtServerGroup {
  broker: string;
  servers: string[];
}

export function parseServerSearch(raw: unknown): MtServerGroup[] {
  const o = obj(raw, 'server search result');
  return Object.entries(o)
    .filter((e): e is [string, unknown[]] => Array.isArray(e[1]))
    .map(([broker, servers]) => ({ broker, servers: servers.filter((s): s is string => typeof s === 'string') }));
}

export interface MtAccountDto {
  id: string;
  state: string;
  connectionStatus: string;
  login: string | null;
  server: string | null;
  /** The region whose client-API and streaming hosts serve the account. */
  region: string | null;
}

/** Create answers `{id, state}`; reads answer the full DTO with `_id`. */
export function parseAccountDto(raw: unknown): MtAccountDto {
  const a = obj(raw, 'account');
  return {
    id: idOf(a._id ?? a.id, 'account id'),
    state: str(a.state) ?? 'UNKNOWN',
    connectionStatus: str(a.connectionStatus) ?? 'DISCONNECTED',
    login: optId(a.login),
    server: str(a.server),
    region: str(a.region),
  };
}

export interface MtErrorBody {
  /** `error` name: ValidationError, TooManyRequestsError, ... */
  name: string | null;
  message: string | null;
  /** details.code, or details itself when it is the bare code string (E_AUTH, E_SERVER_TIMEZONE). */
  code: string | null;
  details: unknown;
  metadata: Obj | null;
}

/** Error bodies vary: `details` is an object, an array of field errors, or a bare string; some proxies send text. */
export function parseErrorBody(body: unknown): MtErrorBody {
  if (typeof body === 'string')
    return {
      name: null,
      message: body.length < 500 ? body : body.slice(0, 500),
      code: null,
      details: null,
      metadata: null,
    };
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return { name: null, message: null, code: null, details: null, metadata: null };
  const b = body as Obj;
  const details = b.details;
  const code =
    typeof details === 'string' && /^E_[A-Z_]+$/.test(details)
      ? details
      : details && typeof details === 'object' && !Array.isArray(details) && typeof (details as Obj).code === 'string'
        ? ((details as Obj).code as string)
        : null;
  const metadata =
    b.metadata && typeof b.metadata === 'object' && !Array.isArray(b.metadata) ? (b.metadata as Obj) : null;
  return { name: str(b.error), message: str(b.message), code, details: details ?? null, metadata };
}

/** Milliseconds until `metadata.recommendedRetryTime` (an ISO time); null when absent or unreadable. */
export function recommendedRetryMs(metadata: Obj | null, now = Date.now()): number | null {
  const t = metadata?.recommendedRetryTime;
  if (typeof t !== 'string' && typeof t !== 'number') return null;
  const ms = typeof t === 'number' ? t : Date.parse(t);
  if (!Number.isFinite(ms)) return null;
  return Math.max(0, ms - now);
}

/** The same in whole seconds, rounded up: what AppError.retryAfter carries. */
export function recommendedRetrySec(metadata: Obj | null, now = Date.now()): number | null {
  const ms = recommendedRetryMs(metadata, now);
  return ms === null ? null : Math.ceil(ms / 1000);
}
