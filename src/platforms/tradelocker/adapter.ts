import type { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { AccountInfo, Deal, InstrumentSpec, Order, Position, Side } from '../../domain/types.js';
import type {
  BrokerAdapter,
  BrokerEvent,
  Capabilities,
  ModifyOrderChange,
  OrderOutcome,
  OrderQuery,
  PlaceOrderRequest,
  TagLookup,
} from '../adapter.js';
import { cancelRefusal, mayBeNoLongerPending } from './cancel-refusal.js';
import { TRADELOCKER_TAG_MAX, tradeLockerCapabilities } from './capabilities.js';
import { errmsgOf, isEnvelopeError, readError, writeFailure } from './errors.js';
import { RatePacer } from './pacer.js';
import {
  checkExecutionColumns,
  type InstrumentRef,
  type ParsedExecution,
  type ParsedOrder,
  parseAccountDetails,
  parseAllAccounts,
  parseExecutionRow,
  parseInstrumentDetails,
  parseInstruments,
  parseOrderRow,
  parsePositionRow,
  parseTradeConfig,
  rowsOf,
  type TradeConfig,
  unwrap,
} from './parse.js';
import {
  type AuthContext,
  type ModifyOrderBody,
  type OrdersQuery,
  type PlaceOrderBody,
  TradeLockerRawClient,
  type WireResult,
} from './raw-client.js';
import { wirePrices } from './wire-prices.js';
import { TradeLockerSession } from './session.js';
import { PollingWatcher } from '../polling-watcher.js';
import { confirmed, denied, rejected } from '../adapter.js';
import { indexTags } from '../tag-index.js';

export interface TradeLockerAdapterOptions {
  /** Ends with /backend-api. */
  baseUrl: string;
  email: string;
  password: string;
  server: string;
  /** all-accounts `id`: the path accountId and the number the user sees after `#`. */
  accountId: string;
  /** all-accounts `accNum`: the header value. */
  accNum: number;
  /** Per-request timeout; a write that exceeds it is `unresolved`. */
  timeoutMs?: number;
  /** Poll period of subscribe(); raised automatically to stay inside the served rate limits. */
  pollIntervalMs?: number;
  fetch?: typeof fetch;
  /** Clock in ms for the access token's refresh schedule; Date.now when omitted. */
  now?: () => number;
}

/** How far back we look for the order a write just created; covers clock skew between us and the broker. */
const SETTLE_LOOKBACK_MS = 5 * 60_000;
/**
 * Looked at first, before the whole lookback: the history is walked oldest first, so reading five minutes of it to
 * find the newest order parsed every order the account made in those minutes, on every write (a soak Slave at
 * 30 orders a minute: 150 rows per write, the main thread's largest cost that grew with the run's age).
 */
const NEAR_LOOKBACK_MS = 30_000;
const MAX_HISTORY_PAGES = 50;

type WriteResult = { ok: true; body: unknown } | { ok: false; outcome: OrderOutcome };

/**
 * BrokerAdapter over the TradeLocker public REST API: build the request, call the raw client, parse.
 * Reads refresh the token once on 401 and retry; writes are sent exactly once and a lost answer is
 * `unresolved`, settled later by strategyId (which carries our correlation tag).
 */
export class TradeLockerAdapter implements BrokerAdapter {
  readonly capabilities: Capabilities = tradeLockerCapabilities();
  private readonly raw: TradeLockerRawClient;
  private readonly session: TradeLockerSession;
  private readonly pacer = new RatePacer();
  private readonly pollIntervalMs: number;
  private config: TradeConfig | null = null;
  private bySymbol = new Map<string, InstrumentRef>();
  private byTid = new Map<number, InstrumentRef>();
  private readonly specs = new Map<string, InstrumentSpec>();
  private ready: Promise<void> | null = null;
  private listing: { currency: string; number: string } | null = null;
  private watcher: PollingWatcher | null = null;
  private readonly closed = { closed: false };

  constructor(private readonly opts: TradeLockerAdapterOptions) {
    this.raw = new TradeLockerRawClient({
      baseUrl: opts.baseUrl,
      timeoutMs: opts.timeoutMs ?? 10_000,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    this.session = new TradeLockerSession(
      this.raw,
      { email: opts.email, password: opts.password, server: opts.server },
      opts.now,
    );
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
  }

  /** Signs in and loads config and instruments now, so a bad credential shows up at connect time. */
  async connect(): Promise<void> {
    await this.ensureReady();
  }

  // ---- reads --------------------------------------------------------------------------------------

  async accountInfo(): Promise<AccountInfo> {
    const cfg = await this.ensureReady();
    const details = await this.read(
      'GET_ACCOUNTS_STATE',
      'account state',
      (a) => this.raw.accountState(a, this.opts.accountId),
      (b) => parseAccountDetails(b, cfg.accountDetails),
    );
    if (!this.listing) {
      const accounts = await this.read(null, 'account list', (a) => this.raw.allAccounts(a), parseAllAccounts);
      const mine = accounts.find((x) => x.id === this.opts.accountId);
      this.listing = { currency: mine?.currency ?? '', number: this.opts.accountId };
    }
    const balance = details.get('balance');
    if (!balance) throw new AppError('upstream_error', 'TradeLocker account state has no balance value');
    return {
      balance,
      // projectedBalance is balance plus open P/L: what other platforms call equity.
      equity: details.get('projectedBalance') ?? balance,
      currency: this.listing.currency,
      brokerAccountNumber: this.listing.number,
    };
  }

  /** The account's instruments as `GET /trade/accounts/{id}/instruments` listed them at start. */
  async listSymbols(): Promise<string[]> {
    await this.ensureReady();
    return [...this.bySymbol.keys()];
  }

  async instrument(symbol: string): Promise<InstrumentSpec | null> {
    await this.ensureReady();
    const ref = this.bySymbol.get(symbol);
    if (!ref) return null;
    const cached = this.specs.get(symbol);
    if (cached) return cached;
    const spec = await this.read(
      'GET_INSTRUMENT_DETAILS',
      `instrument ${symbol}`,
      (a) => this.raw.instrumentDetails(a, ref.tradableInstrumentId, ref.infoRouteId),
      (b) => parseInstrumentDetails(b, symbol),
    );
    this.specs.set(symbol, spec);
    return spec;
  }

  async symbolOfInstrumentId(instrumentId: string): Promise<string | null> {
    if (!/^\d{1,15}$/.test(instrumentId)) return null;
    await this.ensureReady();
    return this.byTid.get(Number(instrumentId))?.symbol ?? null;
  }

  async listPositions(): Promise<Position[]> {
    return (await this.snapshot(false)).positions;
  }

  async listOrders(query: OrderQuery = {}): Promise<Order[]> {
    await this.ensureReady();
    const q: OrdersQuery = {};
    if (query.from) q.from = query.from.getTime();
    if (query.to) q.to = query.to.getTime();
    if (query.symbol) {
      const ref = this.bySymbol.get(query.symbol);
      if (!ref) return [];
      q.tradableInstrumentId = ref.tradableInstrumentId;
    }
    const pending = (await this.pendingOrders(q)).filter((o) => !isProtective(o)).map((o) => o.order);
    if (!query.includeHistory) return pending;
    const history: Order[] = [];
    await this.historyPages(q, (o) => {
      history.push(o.order);
      return false;
    });
    return [...pending, ...history];
  }

  async findByTag(tag: string): Promise<TagLookup> {
    const { positions, orders } = await this.snapshot(true);
    const position = positions.find((p) => p.tag === tag);
    if (position) return { found: true, position };
    const order = orders.find((o) => o.tag === tag);
    if (order) return { found: true, order };
    // A filled or cancelled order still proves the write reached the broker; the newest match wins.
    let last: Order | undefined;
    await this.historyPages({}, (o) => {
      if (o.order.tag === tag) last = o.order;
      return false;
    });
    return last ? { found: true, order: last } : { found: false };
  }

  async tagIndex(since: Date): Promise<ReadonlyMap<string, TagLookup>> {
    const { positions, orders } = await this.snapshot(true);
    const history: Order[] = [];
    await this.historyPages({ from: since.getTime() }, (o) => {
      history.push(o.order);
      return false;
    });
    return indexTags(positions, orders, history);
  }

  /**
   * The account's fills from GET /executions, at or after `since`, oldest first.
   *
   * What the real API gives (tradelocker-python `get_all_executions`, the fact sheet's section 8): the executions
   * of the current session, no query parameters (so no time filter: `since` is applied here), rows of the
   * filledOrdersConfig columns id, price, side, createdDate, qty, orderId, positionId, tradableInstrumentId.
   * Nothing on the row says open or close, and nothing carries strategyId, so:
   * - entry: the server is hedging-style (a position never flips), so a fill on the position's own side opened or
   *   added to it ('in') and a fill on the opposite side reduced or closed it ('out'). The position's side is read
   *   from /positions while it is open, else taken from its oldest execution in the list (walked oldest first over
   *   the whole session, not only the window, so a close after `since` still sees an open made before it). A
   *   position opened in an earlier session and closed in this one, so absent from both, would have its first
   *   close read as 'in': the session-only list gives nothing better.
   * - tag: the strategyId of the fill's order, from /ordersHistory (a lookback before the oldest fill wanted, the
   *   walk stopping once every order is found) or /orders for a partly filled working order; an order without one
   *   (a closing order made by DELETE /positions) takes the position's tag, as the position row or its opening
   *   order holds it. Null when none of these is found.
   */
  async listDeals(since: Date): Promise<Deal[]> {
    const cfg = await this.ensureReady();
    checkExecutionColumns(cfg.filledOrders);
    const fills = await this.read(
      'GET_EXECUTIONS',
      'executions',
      (a) => this.raw.executions(a, this.opts.accountId),
      (b) => rowsOf(b, 'executions').map((row) => parseExecutionRow(row, cfg.filledOrders)),
    );
    fills.sort((x, y) => x.timeMs - y.timeMs || compareIds(x.id, y.id));
    const fromMs = since.getTime();
    const wanted = fills.filter((f) => f.timeMs >= fromMs);
    if (wanted.length === 0) return [];

    const open = await this.read(
      'GET_POSITIONS',
      'positions',
      (a) => this.raw.positions(a, this.opts.accountId),
      (b) => rowsOf(b, 'positions').map((row) => parsePositionRow(row, cfg.positions, this.symbolOf).position),
    );
    const openById = new Map(open.map((p) => [p.id, p]));
    const positionSide = new Map<string, Side>();
    /** Per position, the order and time of its first 'in' fill: where the position's tag is found once it closed. */
    const opening = new Map<string, { orderId: string; timeMs: number }>();
    const entryOf = new Map<string, 'in' | 'out'>();
    for (const f of fills) {
      let sideOf = positionSide.get(f.positionId);
      if (!sideOf) {
        sideOf = openById.get(f.positionId)?.side ?? f.side;
        positionSide.set(f.positionId, sideOf);
      }
      const entry = f.side === sideOf ? 'in' : 'out';
      entryOf.set(f.id, entry);
      if (entry === 'in' && f.orderId && !opening.has(f.positionId))
        opening.set(f.positionId, { orderId: f.orderId, timeMs: f.timeMs });
    }

    const tags = await this.orderTags(wanted, opening);
    const positionTag = (positionId: string): string | null => {
      const onRow = openById.get(positionId)?.tag;
      if (onRow) return onRow;
      const opener = opening.get(positionId);
      return (opener && tags.get(opener.orderId)) || null;
    };
    return wanted.map((f) => ({
      id: f.id,
      orderId: f.orderId,
      positionId: f.positionId,
      symbol: this.symbolOf(f.tradableInstrumentId),
      side: f.side,
      volume: f.qty,
      price: f.price,
      entry: entryOf.get(f.id)!,
      time: new Date(f.timeMs).toISOString(),
      tag: (f.orderId && tags.get(f.orderId)) || positionTag(f.positionId),
      // An execution row (filledOrdersConfig) carries no profit, swap or commission: history computes profit.
      profit: null,
      swap: null,
      commission: null,
    }));
  }

  // ---- writes -------------------------------------------------------------------------------------

  async placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    if (req.tag.length > TRADELOCKER_TAG_MAX)
      return denied(
        'tag_too_long',
        `strategyId holds at most ${TRADELOCKER_TAG_MAX} characters, tag has ${req.tag.length}`,
      );
    if (!req.volume.isFinite() || req.volume.lte(0)) return denied('invalid_volume', 'volume must be positive');
    if (req.type !== 'market' && (!req.price || req.price.lte(0)))
      return denied('price_required', `a ${req.type} order needs a price`);
    try {
      await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    const ref = this.bySymbol.get(req.symbol);
    if (!ref) return denied('unknown_symbol', `TradeLocker has no instrument ${req.symbol}`);
    const levels = wirePrices({ price: req.price, stopLoss: req.stopLoss, takeProfit: req.takeProfit });
    if ('denied' in levels) return levels.denied;
    const body: PlaceOrderBody = {
      tradableInstrumentId: String(ref.tradableInstrumentId),
      qty: req.volume.toFixed(),
      side: req.side,
      type: req.type,
      validity: req.type === 'market' ? 'IOC' : 'GTC',
      routeId: String(ref.tradeRouteId),
      strategyId: req.tag,
    };
    if (req.type === 'limit') body.price = levels.price!;
    if (req.type === 'stop') body.stopPrice = levels.price!;
    if (levels.stopLoss !== undefined) Object.assign(body, { stopLoss: levels.stopLoss, stopLossType: 'absolute' });
    if (levels.takeProfit !== undefined)
      Object.assign(body, { takeProfit: levels.takeProfit, takeProfitType: 'absolute' });

    const sentAt = Date.now();
    const res = await this.write('PLACE_ORDER', 'place order', (a) =>
      this.raw.placeOrder(a, this.opts.accountId, body),
    );
    if (!res.ok) return res.outcome;
    const orderId = (() => {
      try {
        const id = unwrap(res.body).orderId;
        return id === undefined || id === null || id === '' ? null : String(id);
      } catch {
        return null;
      }
    })();
    // The official client's rule: a 2xx without d.orderId is a broker rejection.
    if (!orderId) return rejected('broker_rejected', errmsgOf(res.body) ?? 'no orderId in the answer', res.body);
    return this.settlePlaced(orderId, ref, req.type === 'market', sentAt);
  }

  async closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    if (volume !== undefined && (!volume.isFinite() || volume.lte(0)))
      return denied('invalid_volume', 'volume to close must be positive');
    try {
      await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    const sentAt = Date.now();
    const res = await this.write('MODIFY_POSITION', 'close position', (a) =>
      this.raw.closePosition(a, positionId, volume ? volume.toFixed() : '0'),
    );
    if (!res.ok) return res.outcome;
    // Closing places a closing order; its fill is the detail worth reporting, when we can see it.
    let closing: ParsedOrder | undefined;
    try {
      await this.historySince(
        {},
        sentAt,
        (o) => {
          if (
            o.order.positionId === positionId &&
            o.order.status === 'filled' &&
            (!closing || o.order.createdAt >= closing.order.createdAt)
          )
            closing = o;
          return false;
        },
        () => closing !== undefined,
      );
    } catch {
      // The close itself succeeded; missing details are not a reason to report anything else.
    }
    return confirmed({
      positionId,
      brokerOrderId: closing?.order.id ?? null,
      filledVolume: closing?.order.filledVolume ?? volume ?? null,
      fillPrice: closing?.avgPrice ?? null,
      brokerTime: closing?.order.updatedAt ?? new Date().toISOString(),
      raw: res.body,
    });
  }

  async modifyPosition(
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<OrderOutcome> {
    try {
      await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    const levels = wirePrices({ stopLoss: change.stopLoss, takeProfit: change.takeProfit });
    if ('denied' in levels) return levels.denied;
    const res = await this.write('MODIFY_POSITION', 'modify position', (a) =>
      this.raw.modifyPosition(a, positionId, {
        stopLoss: levels.stopLoss ?? null,
        takeProfit: levels.takeProfit ?? null,
      }),
    );
    if (!res.ok) return res.outcome;
    return confirmed({ positionId, brokerTime: new Date().toISOString(), raw: res.body });
  }

  async cancelOrder(orderId: string): Promise<OrderOutcome> {
    try {
      await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    const res = await this.write('MODIFY_ORDER', 'cancel order', (a) => this.raw.cancelOrder(a, orderId));
    if (res.ok) return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.body });
    if (res.outcome.kind !== 'rejected' || !mayBeNoLongerPending(res.outcome)) return res.outcome;
    // Refused: most often the order filled (or was cancelled) first. Its history row says which.
    const order = await this.orderInHistory(orderId).catch(() => undefined);
    return order === undefined ? res.outcome : cancelRefusal(orderId, res.outcome, order);
  }

  /** The order's newest row in /ordersHistory, null when it is not there (a read failure throws). */
  private async orderInHistory(orderId: string): Promise<Order | null> {
    let found: Order | null = null;
    await this.historyPages({}, (o) => {
      if (o.order.id !== orderId) return false;
      found = o.order;
      return true;
    });
    return found;
  }

  async modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    let current: ParsedOrder | undefined;
    try {
      await this.ensureReady();
      // Limit orders move `price`, stop orders `stopPrice`: the order's type decides which field we send.
      current = (await this.pendingOrders({})).find((o) => o.order.id === orderId);
    } catch (err) {
      return notSent(err);
    }
    if (!current) return rejected('not_found', `no pending order ${orderId}`);
    const levels = wirePrices({ price: change.price, stopLoss: change.stopLoss, takeProfit: change.takeProfit });
    if ('denied' in levels) return levels.denied;
    const body: ModifyOrderBody = {};
    if (levels.price !== undefined) body[current.order.type === 'stop' ? 'stopPrice' : 'price'] = levels.price;
    if (change.volume) body.qty = change.volume.toFixed();
    if (change.stopLoss !== undefined)
      Object.assign(
        body,
        levels.stopLoss !== undefined ? { stopLoss: levels.stopLoss, stopLossType: 'absolute' } : { stopLoss: null },
      );
    if (change.takeProfit !== undefined)
      Object.assign(
        body,
        levels.takeProfit !== undefined
          ? { takeProfit: levels.takeProfit, takeProfitType: 'absolute' }
          : { takeProfit: null },
      );
    const res = await this.write('MODIFY_ORDER', 'modify order', (a) => this.raw.modifyOrder(a, orderId, body));
    if (!res.ok) return res.outcome;
    return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.body });
  }

  writeRatePerSecond(): number | null {
    const spacing = this.pacer.minSpacingMs('PLACE_ORDER');
    return spacing > 0 ? 1000 / spacing : null;
  }

  // ---- events -------------------------------------------------------------------------------------

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    if (!this.watcher) {
      this.watcher = new PollingWatcher({
        snapshot: () => this.snapshot(false),
        finalOrder: (o) => this.finalOrder(o),
        // Two reads per poll; use at most half of each route's budget so trading calls keep the rest.
        intervalMs: () =>
          Math.max(
            this.pollIntervalMs,
            2 * this.pacer.minSpacingMs('GET_POSITIONS'),
            2 * this.pacer.minSpacingMs('GET_ORDERS'),
          ),
      });
    }
    return this.watcher.add(listener);
  }

  async close(): Promise<void> {
    this.closed.closed = true;
    this.watcher?.stop();
    this.watcher = null;
    this.session.clear();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private auth(accessToken: string): AuthContext {
    return { accessToken, accNum: this.opts.accNum };
  }

  private ensureReady(): Promise<TradeConfig> {
    if (!this.ready) {
      this.ready = (async () => {
        const cfg = await this.read(null, 'trade config', (a) => this.raw.config(a), parseTradeConfig, true);
        this.pacer.configure(cfg.rateLimits);
        this.config = cfg;
        const list = await this.read(
          'GET_INSTRUMENTS',
          'instruments',
          (a) => this.raw.instruments(a, this.opts.accountId),
          parseInstruments,
          true,
        );
        this.bySymbol = new Map(list.map((i) => [i.symbol, i]));
        this.byTid = new Map(list.map((i) => [i.tradableInstrumentId, i]));
      })();
      // A failed start must not stick: the next call tries again.
      this.ready.catch(() => (this.ready = null));
    }
    return this.ready.then(() => this.config!);
  }

  private symbolOf = (tid: number): string => this.byTid.get(tid)?.symbol ?? `#${tid}`;

  /** Reads may be repeated: one token refresh and one retry on 401; everything else maps to an AppError. */
  private async read<T>(
    type: string | null,
    what: string,
    call: (a: AuthContext) => Promise<WireResult>,
    parse: (body: unknown) => T,
    skipReady = false,
  ): Promise<T> {
    if (this.closed.closed) throw new AppError('upstream_unavailable', 'adapter closed');
    if (!skipReady) await this.ensureReady();
    for (let attempt = 0; ; attempt++) {
      const token = await this.session.accessToken();
      await this.pacer.take(type, this.closed);
      const r = await call(this.auth(token));
      if (r.kind === 'response' && r.status === 401 && attempt === 0) {
        await this.session.invalidate(token);
        continue;
      }
      if (r.kind === 'response' && r.status === 429) this.pacer.block(type, r.retryAfterSec ?? 1);
      if (r.kind === 'response' && r.status >= 200 && r.status < 300 && !isEnvelopeError(r.body)) return parse(r.body);
      throw readError(r, `TradeLocker ${what}`);
    }
  }

  /** Writes go out once. A 401 still renews the token for the next call, but this write is not repeated. */
  private async write(type: string, what: string, call: (a: AuthContext) => Promise<WireResult>): Promise<WriteResult> {
    if (this.closed.closed) return { ok: false, outcome: denied('upstream_unavailable', 'adapter closed') };
    let token: string;
    try {
      token = await this.session.accessToken();
    } catch (err) {
      return { ok: false, outcome: notSent(err) };
    }
    await this.pacer.take(type, this.closed);
    const r = await call(this.auth(token));
    if (r.kind === 'response' && r.status === 401) await this.session.invalidate(token).catch(() => undefined);
    if (r.kind === 'response' && r.status === 429) this.pacer.block(type, r.retryAfterSec ?? 1);
    const failure = writeFailure(r, `TradeLocker ${what}`);
    return failure ? { ok: false, outcome: failure } : { ok: true, body: r.kind === 'response' ? r.body : null };
  }

  private pendingOrders(q: OrdersQuery): Promise<ParsedOrder[]> {
    return this.read(
      'GET_ORDERS',
      'orders',
      (a) => this.raw.orders(a, this.opts.accountId, q),
      (b) => rowsOf(b, 'orders').map((row) => parseOrderRow(row, this.config!.orders, this.symbolOf)),
    );
  }

  /**
   * Walks ordersHistory oldest first. Paging moves `from` to the last createdDate seen (the API has no cursor),
   * so rows on the boundary come twice and are skipped by id. `visit` returning true stops the walk.
   */
  private async historyPages(q: OrdersQuery, visit: (o: ParsedOrder) => boolean): Promise<void> {
    const seen = new Set<string>();
    let from = q.from;
    for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
      const query: OrdersQuery = { ...q, ...(from !== undefined ? { from } : {}) };
      const { rows, hasMore } = await this.read(
        'GET_ORDERS_HISTORY',
        'orders history',
        (a) => this.raw.ordersHistory(a, this.opts.accountId, query),
        (b) => ({
          rows: rowsOf(b, 'ordersHistory').map((row) => parseOrderRow(row, this.config!.ordersHistory, this.symbolOf)),
          hasMore: unwrap(b).hasMore === true,
        }),
      );
      let newest = from ?? 0;
      let fresh = 0;
      for (const o of rows) {
        if (seen.has(o.order.id)) continue;
        seen.add(o.order.id);
        fresh++;
        if (visit(o)) return;
        newest = Math.max(newest, Date.parse(o.order.createdAt));
      }
      if (!hasMore || fresh === 0) return;
      from = newest;
    }
  }

  /**
   * The history a write sent at `sentAt` just added to: its last NEAR_LOOKBACK_MS, then, only if `found` is still
   * false (the broker's clock behind ours, or a slow answer), the rest of the lookback.
   */
  private async historySince(
    q: OrdersQuery,
    sentAt: number,
    visit: (o: ParsedOrder) => boolean,
    found: () => boolean,
  ): Promise<void> {
    await this.historyPages({ ...q, from: sentAt - NEAR_LOOKBACK_MS }, visit);
    if (found()) return;
    await this.historyPages({ ...q, from: sentAt - SETTLE_LOOKBACK_MS, to: sentAt - NEAR_LOOKBACK_MS }, visit);
  }

  /**
   * strategyId by order id for the orders of `fills` and the opening orders of their positions (only non-empty
   * ones). ordersHistory has no id filter: it is walked from SETTLE_LOOKBACK_MS before the oldest of those fills
   * (an order is created before it fills) and stops once every order is seen; what is still missing may be a partly filled order still working, so /orders is
   * read then.
   */
  private async orderTags(
    fills: ParsedExecution[],
    opening: ReadonlyMap<string, { orderId: string; timeMs: number }>,
  ): Promise<Map<string, string>> {
    const need = new Set<string>();
    let oldest = Number.POSITIVE_INFINITY;
    for (const f of fills) {
      if (f.orderId) need.add(f.orderId);
      oldest = Math.min(oldest, f.timeMs);
      const opener = opening.get(f.positionId);
      if (opener) {
        need.add(opener.orderId);
        oldest = Math.min(oldest, opener.timeMs);
      }
    }
    const tags = new Map<string, string>();
    const seen = new Set<string>();
    const take = (o: ParsedOrder) => {
      if (!need.has(o.order.id)) return false;
      seen.add(o.order.id);
      if (o.order.tag) tags.set(o.order.id, o.order.tag);
      return seen.size === need.size;
    };
    if (need.size === 0) return tags;
    await this.historyPages({ from: oldest - SETTLE_LOOKBACK_MS }, take);
    if (seen.size < need.size) for (const o of await this.pendingOrders({})) take(o);
    return tags;
  }

  /** Positions with SL/TP levels filled in from their child orders, plus the user's pending orders. */
  private async snapshot(withOrders: boolean): Promise<{ positions: Position[]; orders: Order[] }> {
    const cfg = await this.ensureReady();
    const parsed = await this.read(
      'GET_POSITIONS',
      'positions',
      (a) => this.raw.positions(a, this.opts.accountId),
      (b) => rowsOf(b, 'positions').map((row) => parsePositionRow(row, cfg.positions, this.symbolOf)),
    );
    const needOrders = withOrders || this.watcherActive() || parsed.some((p) => p.stopLossId || p.takeProfitId);
    const orders = needOrders ? await this.pendingOrders({}) : [];
    const byId = new Map(orders.map((o) => [o.order.id, o]));
    const positions = parsed.map(({ position, stopLossId, takeProfitId }) => ({
      ...position,
      stopLoss: stopLossId ? (byId.get(stopLossId)?.stopPrice ?? null) : null,
      takeProfit: takeProfitId ? (byId.get(takeProfitId)?.limitPrice ?? null) : null,
    }));
    return { positions, orders: orders.filter((o) => !isProtective(o)).map((o) => o.order) };
  }

  private watcherActive(): boolean {
    return this.watcher !== null;
  }

  private async finalOrder(o: Order): Promise<Order | null> {
    const ref = this.bySymbol.get(o.symbol);
    let found: Order | null = null;
    await this.historyPages(
      { from: Date.parse(o.createdAt) - 1000, ...(ref ? { tradableInstrumentId: ref.tradableInstrumentId } : {}) },
      (h) => {
        if (h.order.id !== o.id) return false;
        found = h.order;
        return true;
      },
    );
    return found;
  }

  /**
   * After an accepted place: read back the order to report fill, position and price. If the read fails the
   * order is still confirmed (the broker gave us its id); only a final refusal turns it into a rejection.
   */
  private async settlePlaced(
    orderId: string,
    ref: InstrumentRef,
    market: boolean,
    sentAt: number,
  ): Promise<OrderOutcome> {
    const q: OrdersQuery = { tradableInstrumentId: ref.tradableInstrumentId };
    const inHistory = async () => {
      let hit: ParsedOrder | undefined;
      await this.historySince(
        q,
        sentAt,
        (o) => {
          if (o.order.id !== orderId) return false;
          hit = o;
          return true;
        },
        () => hit !== undefined,
      );
      return hit;
    };
    const inBook = async () => (await this.pendingOrders(q)).find((o) => o.order.id === orderId);
    let found: ParsedOrder | undefined;
    try {
      found = market ? ((await inHistory()) ?? (await inBook())) : ((await inBook()) ?? (await inHistory()));
    } catch {
      return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString() });
    }
    if (!found) return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString() });
    const o = found.order;
    if (o.status === 'rejected' || (o.status === 'cancelled' && o.filledVolume.isZero())) {
      return rejected('broker_refused', `order ${orderId} ended ${found.rawStatus}`, {
        orderId,
        status: found.rawStatus,
      });
    }
    const filled = o.filledVolume.gt(0);
    return confirmed({
      brokerOrderId: orderId,
      positionId: o.positionId,
      filledVolume: filled ? o.filledVolume : null,
      fillPrice: filled ? found.avgPrice : null,
      brokerTime: o.updatedAt,
    });
  }
}

/** Broker ids are 64-bit decimal strings: shorter is smaller, equal lengths compare as text. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** SL/TP live as child orders tied to a position; they are not the user's pending orders. */
function isProtective(o: ParsedOrder): boolean {
  return o.order.status === 'pending' && o.order.positionId !== null;
}

/** A failure before anything was sent (sign-in, config): safe to retry, so it is `denied`, not unresolved. */
function notSent(err: unknown): OrderOutcome {
  if (err instanceof AppError) return denied(err.code, `not sent: ${err.message}`);
  return denied('internal_error', `not sent: ${err instanceof Error ? err.message : String(err)}`);
}
