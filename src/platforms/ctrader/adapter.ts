import { type Decimal, dec, isMultipleOf } from '../../domain/decimal.js';
import type { AccountInfo, Deal, InstrumentSpec, Order, Position, Quote } from '../../domain/types.js';
import type {
  BrokerAdapter,
  BrokerEvent,
  Capabilities,
  ConfirmedOutcome,
  ModifyOrderChange,
  OrderOutcome,
  OrderQuery,
  PlaceOrderRequest,
  TagLookup,
} from '../adapter.js';
import { CTRADER_TAG_MAX, ctraderCapabilities } from './capabilities.js';
import type { CTraderConnection } from './connection.js';
import { RequestTimeoutError, readError, writeFailure } from './errors.js';
import { OrderView, type OrderTarget } from './order-view.js';
import { PositionView, type PositionTarget } from './position-view.js';
import {
  isExecutedDeal,
  parseDeal,
  parseExecutionEvent,
  parseOrder,
  parsePosition,
  parseSymbol,
  toInstrumentSpec,
  closedVolume,
  type SymbolInfo,
} from './parse.js';
import { ExecutionType, OrderStatus, OrderType, TradeSide } from '../../protocols/ctrader/enums.js';
import type {
  AssetMsg,
  DealMsg,
  Envelope,
  ExecutionEventMsg,
  LightSymbolMsg,
  OrderListResMsg,
  OrderMsg,
  ReconcileResMsg,
  SpotEventMsg,
  SymbolMsg,
  TraderMsg,
  UnrealizedPnLResMsg,
} from '../../protocols/ctrader/messages.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import {
  fromMoney,
  lotsToWireVolume,
  msToIso,
  priceFromDouble,
  RELATIVE_PRICE_SCALE,
  toRelative,
} from '../../protocols/ctrader/units.js';
import { confirmed, denied, rejected } from '../adapter.js';
import { indexTags } from '../tag-index.js';

export interface CTraderAdapterOptions {
  /** The connection the account is on, or where to find it now (the factory's pool may move it: see factory.ts). */
  connection: CTraderConnection | (() => CTraderConnection);
  ctidTraderAccountId: string;
  /** How long a write waits for its execution event before it is `unresolved`. */
  timeoutMs?: number;
  /** History window used when a query gives no `from` (order list, tag lookup). */
  historyDays?: number;
  /** Called when the adapter is closed, so the owner can release the shared connection. */
  onClose?: () => Promise<void> | void;
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

/**
 * Deals asked per ProtoOADealListReq (`maxRows`). The server caps a page on its own too: the protocol's text says
 * `hasMore` is set when there are "more than 10000 deals"; we page well below that.
 */
export const DEAL_PAGE_ROWS = 1000;

/** ProtoOADealListRes (not in the shared message types: only this read uses it). */
interface DealListResMsg {
  ctidTraderAccountId: string;
  deal?: DealMsg[];
  hasMore: boolean;
}

/**
 * Platform C over the Open API. Writes are answered by execution events (streamed), matched to the request by
 * clientMsgId; the correlation tag travels in clientOrderId and label. Reads go through reconcile, trader, symbol
 * and history requests; nothing is polled.
 */
export class CTraderAdapter implements BrokerAdapter {
  /** HEDGED until the trader is read (cTrader's default account type); a NETTED account says so in every read. */
  private hedging = true;
  private readonly connectionOf: () => CTraderConnection;
  private readonly ctid: string;
  private readonly timeoutMs: number;
  private readonly historyMs: number;
  private lightSymbols: Promise<Map<string, LightSymbolMsg>> | null = null;
  private readonly symbols = new Map<string, SymbolInfo>();
  private readonly symbolLoads = new Map<string, Promise<SymbolInfo | null>>();
  private assets: Promise<Map<string, string>> | null = null;
  private readonly spots = new Map<string, { bid: Decimal; ask: Decimal; conn: CTraderConnection; epoch: number }>();
  private readonly spotWaiters = new Map<string, (() => void)[]>();
  private readonly listeners = new Set<(ev: BrokerEvent) => void>();
  private eventChain: Promise<void> = Promise.resolve();
  private readonly positions = new PositionView();
  private readonly orders = new OrderView();
  private readonly offEvents: () => void;
  private closed = false;

  get capabilities(): Capabilities {
    return ctraderCapabilities({ hedging: this.hedging });
  }

  private get conn(): CTraderConnection {
    return this.connectionOf();
  }

  constructor(private readonly opts: CTraderAdapterOptions) {
    const c = opts.connection;
    this.connectionOf = typeof c === 'function' ? c : () => c;
    this.ctid = opts.ctidTraderAccountId;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.historyMs = (opts.historyDays ?? 30) * 24 * 3600 * 1000;
    this.offEvents = this.conn.onAccountEvent(this.ctid, (env) => this.onEvent(env));
  }

  // ---- reads --------------------------------------------------------------------------------------------

  async accountInfo(signal?: AbortSignal): Promise<AccountInfo> {
    return this.read('account info', async () => {
      const [traderEnv, pnlEnv] = await Promise.all([
        this.call(PT.TRADER_REQ, {}, signal),
        this.call(PT.GET_POSITION_UNREALIZED_PNL_REQ, {}, signal),
      ]);
      const t = (traderEnv.payload as { trader: TraderMsg }).trader;
      this.hedging = (t.accountType ?? 0) !== 1;
      const balance = fromMoney(t.balance, t.moneyDigits ?? 2);
      const pnl = pnlEnv.payload as unknown as UnrealizedPnLResMsg;
      const unrealized = (pnl.positionUnrealizedPnL ?? []).reduce(
        (sum, p) => sum.plus(fromMoney(p.netUnrealizedPnL, pnl.moneyDigits)),
        dec(0),
      );
      const currency = (await this.assetNames(signal)).get(String(t.depositAssetId)) ?? String(t.depositAssetId);
      return {
        balance,
        equity: balance.plus(unrealized),
        currency,
        brokerAccountNumber: String(t.traderLogin ?? this.ctid),
        // ProtoOAAccessRights: FULL_ACCESS (0, the default) opens trades; CLOSE_ONLY, NO_TRADING and NO_LOGIN do not.
        tradingAllowed: (t.accessRights ?? 0) === 0,
      };
    });
  }

  async instrument(symbol: string): Promise<InstrumentSpec | null> {
    return this.read('instrument', async () => {
      const s = await this.symbolByName(symbol);
      return s ? toInstrumentSpec(s) : null;
    });
  }

  /** The spot subscription the market-order stops already use (pushed bid/ask, kept per connection). */
  async quote(symbol: string): Promise<Quote | null> {
    return this.read('quote', async () => {
      const s = await this.symbolByName(symbol);
      if (!s) return null;
      const q = await this.spot(s);
      return q ? { bid: q.bid, ask: q.ask, time: null } : null;
    });
  }

  async listPositions(): Promise<Position[]> {
    return this.read('positions', async () => {
      const [rec, pnlEnv] = await Promise.all([this.reconcile(), this.call(PT.GET_POSITION_UNREALIZED_PNL_REQ, {})]);
      const pnl = pnlEnv.payload as unknown as UnrealizedPnLResMsg;
      const profits = new Map(
        (pnl.positionUnrealizedPnL ?? []).map((p) => [
          String(p.positionId),
          fromMoney(p.netUnrealizedPnL, pnl.moneyDigits),
        ]),
      );
      const out: Position[] = [];
      for (const p of rec.position ?? []) {
        const s = await this.symbolById(String(p.tradeData.symbolId));
        if (s) out.push(parsePosition(p, s, profits.get(String(p.positionId)) ?? null));
      }
      return out;
    });
  }

  async listOrders(query: OrderQuery = {}): Promise<Order[]> {
    return this.read('orders', async () => {
      const rec = await this.reconcile();
      const raw: OrderMsg[] = [...(rec.order ?? [])];
      if (query.includeHistory) raw.push(...(await this.orderHistory(query.from, query.to)));
      const byId = new Map<string, Order>();
      for (const o of raw) {
        const s = await this.symbolById(String(o.tradeData.symbolId));
        const parsed = s ? parseOrder(o, s) : null;
        if (parsed && !byId.has(parsed.id)) byId.set(parsed.id, parsed);
      }
      const from = query.from?.getTime() ?? -Infinity;
      const to = query.to?.getTime() ?? Infinity;
      return [...byId.values()].filter((o) => {
        const t = Date.parse(o.createdAt);
        return t >= from && t <= to && (!query.symbol || o.symbol === query.symbol);
      });
    });
  }

  /** Open positions and pending orders (reconcile), then the order history, where clientOrderId keeps the tag. */
  async findByTag(tag: string): Promise<TagLookup> {
    return this.read('lookup by tag', async () => {
      const rec = await this.reconcile();
      const out: TagLookup = { found: false };
      const p = (rec.position ?? []).find((x) => x.tradeData.label === tag);
      if (p) {
        const s = await this.symbolById(String(p.tradeData.symbolId));
        if (s) out.position = parsePosition(p, s);
      }
      let o: OrderMsg | undefined = (rec.order ?? []).find((x) => x.clientOrderId === tag || x.tradeData.label === tag);
      // Tags settle recent writes: one week of history (one request) is the window searched.
      o ??= (await this.orderHistory(new Date(Date.now() - WEEK_MS + 60_000), undefined))
        .filter((x) => x.clientOrderId === tag || x.tradeData.label === tag)
        .at(-1);
      if (o) {
        const s = await this.symbolById(String(o.tradeData.symbolId));
        const parsed = s ? parseOrder(o, s) : null;
        if (parsed) out.order = parsed;
      }
      out.found = Boolean(out.position || out.order);
      return out;
    });
  }

  async tagIndex(since: Date): Promise<ReadonlyMap<string, TagLookup>> {
    return this.read('lookup by tag', async () => {
      const rec = await this.reconcile();
      const history = await this.orderHistory(since, undefined);
      const positions: Position[] = [];
      for (const p of rec.position ?? []) {
        if (!p.tradeData.label) continue;
        const s = await this.symbolById(String(p.tradeData.symbolId));
        if (s) positions.push(parsePosition(p, s));
      }
      const orders = async (list: OrderMsg[]) => {
        const out: Order[] = [];
        for (const o of list) {
          if (!o.clientOrderId && !o.tradeData.label) continue;
          const s = await this.symbolById(String(o.tradeData.symbolId));
          const parsed = s ? parseOrder(o, s) : null;
          if (parsed) out.push(parsed);
        }
        return out;
      };
      return indexTags(positions, await orders(rec.order ?? []), await orders(history), { orderWithPosition: true });
    });
  }

  /**
   * The deal list (ProtoOADealListReq) from `since` to now, in windows of at most a week and pages of
   * DEAL_PAGE_ROWS (see dealHistory). Only executed deals (FILLED, PARTIALLY_FILLED) are returned, oldest first.
   * A deal carries no label or clientOrderId, so the tag is read from the order history of the same window (the
   * deal's order's clientOrderId or label); a closing deal whose own order carries none (ProtoOAClosePositionReq
   * has no field for either) takes the tag of an opening deal of the same position listed here. Otherwise null:
   * an order older than the window (a position opened before `since`, closed after it) or one placed without a
   * tag is not searched for further.
   */
  async listDeals(since: Date): Promise<Deal[]> {
    return this.read('deals', async () => {
      const end = new Date(Date.now() + 60_000);
      const raw = (await this.dealHistory(since, end)).filter(
        (d) => isExecutedDeal(d) && Number(d.executionTimestamp) >= since.getTime(),
      );
      if (raw.length === 0) return [];
      const orderTags = new Map<string, string>();
      for (const o of await this.orderHistory(since, end)) {
        const tag = o.clientOrderId || o.tradeData.label;
        if (tag) orderTags.set(String(o.orderId), tag);
      }
      const positionTags = new Map<string, string>();
      for (const d of raw) {
        const tag = orderTags.get(String(d.orderId));
        if (tag && !d.closePositionDetail && !positionTags.has(String(d.positionId)))
          positionTags.set(String(d.positionId), tag);
      }
      const out: { deal: Deal; ms: number }[] = [];
      for (const d of raw) {
        const s = await this.symbolById(String(d.symbolId));
        if (!s) continue;
        const tag = orderTags.get(String(d.orderId)) ?? positionTags.get(String(d.positionId)) ?? null;
        out.push({ deal: parseDeal(d, s, tag), ms: Number(d.executionTimestamp) });
      }
      // Oldest first; deals of one millisecond in the order the server numbered them.
      out.sort((a, b) => a.ms - b.ms || compareIds(a.deal.id, b.deal.id));
      return out.map((x) => x.deal);
    });
  }

  // ---- writes -------------------------------------------------------------------------------------------

  async placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    if (req.tag.length === 0 || req.tag.length > CTRADER_TAG_MAX) {
      return denied('invalid_request', `tag must be 1..${CTRADER_TAG_MAX} characters for clientOrderId`);
    }
    let s: SymbolInfo | null;
    try {
      s = await this.symbolByName(req.symbol);
    } catch (err) {
      return denied(
        readError(err, 'symbol lookup').code,
        `symbol lookup failed before sending: ${(err as Error).message}`,
      );
    }
    if (!s) return denied('unknown_symbol', `unknown symbol ${req.symbol}`);
    const volume = lotsToWireVolume(req.volume, s.lotSize);
    if (
      volume === null ||
      req.volume.lt(s.minVolume) ||
      req.volume.gt(s.maxVolume) ||
      !isMultipleOf(req.volume, s.volumeStep)
    ) {
      return denied(
        'invalid_volume',
        `volume ${req.volume.toString()} outside ${s.minVolume}..${s.maxVolume} step ${s.volumeStep}`,
      );
    }
    const body: Record<string, unknown> = {
      symbolId: s.symbolId,
      tradeSide: req.side === 'buy' ? TradeSide.BUY : TradeSide.SELL,
      volume,
      clientOrderId: req.tag,
      label: req.tag,
    };
    const stops = { stopLoss: req.stopLoss ?? null, takeProfit: req.takeProfit ?? null };
    if (req.type === 'market') {
      body.orderType = OrderType.MARKET;
      if (stops.stopLoss || stops.takeProfit) {
        const relative = await this.relativeStops(s, req.side, stops);
        if ('denied' in relative) return denied('invalid_stops', relative.denied);
        Object.assign(body, relative.fields);
      }
    } else {
      if (!req.price) return denied('invalid_price', `${req.type} order needs a price`);
      body.orderType = req.type === 'limit' ? OrderType.LIMIT : OrderType.STOP;
      body[req.type === 'limit' ? 'limitPrice' : 'stopPrice'] = req.price.toNumber();
      if (stops.stopLoss) body.stopLoss = stops.stopLoss.toNumber();
      if (stops.takeProfit) body.takeProfit = stops.takeProfit.toNumber();
    }
    const isMarket = req.type === 'market';
    let events: Envelope[];
    try {
      events = await this.write(PT.NEW_ORDER_REQ, body, (env) => this.orderDone(env, isMarket));
    } catch (err) {
      if (err instanceof RequestTimeoutError) {
        // A partial fill that never completed is still a position at the broker: report what filled.
        const partial = this.fillOutcome(err.collected, s);
        if (partial && partial.filledVolume) return partial;
      }
      return writeFailure(err, 'new order');
    }
    const out = this.fillOutcome(events, s) ?? this.acceptedOutcome(events);
    if (isMarket && out.kind === 'confirmed' && out.positionId === null) {
      return rejected(
        'not_filled',
        'market order ended without a fill',
        events.map((e) => e.payload),
      );
    }
    if (isMarket && out.kind === 'confirmed' && out.positionId && (stops.stopLoss || stops.takeProfit)) {
      await this.fixStops(out, events, s, stops);
    }
    return out;
  }

  async modifyPosition(
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<OrderOutcome> {
    const body: Record<string, unknown> = { positionId };
    if (change.stopLoss) body.stopLoss = change.stopLoss.toNumber();
    if (change.takeProfit) body.takeProfit = change.takeProfit.toNumber();
    try {
      const events = await this.write(
        PT.AMEND_POSITION_SLTP_REQ,
        body,
        (env) => env.payloadType === PT.EXECUTION_EVENT,
      );
      return confirmed({ positionId, brokerTime: this.eventTime(events), raw: events.map((e) => e.payload) });
    } catch (err) {
      return writeFailure(err, 'amend position SL/TP');
    }
  }

  async closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    let target: { symbolId: string; volume: string } | null;
    try {
      target = await this.positionTarget(positionId);
    } catch (err) {
      return denied(
        readError(err, 'position lookup').code,
        `position lookup failed before sending: ${(err as Error).message}`,
      );
    }
    if (!target) return rejected('position_not_found', `no open position ${positionId}`);
    const s = (await this.symbolById(target.symbolId).catch(() => undefined)) ?? null;
    if (!s) return denied('unknown_symbol', `symbol ${target.symbolId} of position ${positionId} is unknown`);
    const wireVolume = volume ? lotsToWireVolume(volume, s.lotSize) : target.volume;
    if (wireVolume === null)
      return denied('invalid_volume', `volume ${volume?.toString()} is not a whole number of cents of units`);
    try {
      const events = await this.write(PT.CLOSE_POSITION_REQ, { positionId, volume: wireVolume }, (env) =>
        this.orderDone(env, true),
      );
      const out = this.fillOutcome(events, s);
      if (!out)
        return rejected(
          'not_filled',
          'close ended without a fill',
          events.map((e) => e.payload),
        );
      return { ...out, positionId };
    } catch (err) {
      return writeFailure(err, 'close position');
    }
  }

  async cancelOrder(orderId: string): Promise<OrderOutcome> {
    try {
      const events = await this.write(
        PT.CANCEL_ORDER_REQ,
        { orderId },
        (env) => env.payloadType === PT.EXECUTION_EVENT && exec(env).executionType !== ExecutionType.ORDER_ACCEPTED,
      );
      return confirmed({
        brokerOrderId: orderId,
        brokerTime: this.eventTime(events),
        raw: events.map((e) => e.payload),
      });
    } catch (err) {
      return writeFailure(err, 'cancel order');
    }
  }

  /** Omitted fields stay; a null SL/TP cannot be expressed by ProtoOAAmendOrderReq, so it is denied. */
  async modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    if (change.stopLoss === null || change.takeProfit === null) {
      return denied('unsupported', 'removing SL/TP of a pending order is not expressible in ProtoOAAmendOrderReq');
    }
    let current: OrderTarget | null;
    try {
      current = await this.orderTarget(orderId);
    } catch (err) {
      return denied(
        readError(err, 'order lookup').code,
        `order lookup failed before sending: ${(err as Error).message}`,
      );
    }
    if (!current) return rejected('order_not_found', `no pending order ${orderId}`);
    const s = await this.symbolById(current.symbolId).catch(() => undefined);
    if (!s) return denied('unknown_symbol', `symbol of order ${orderId} is unknown`);
    const body: Record<string, unknown> = { orderId };
    if (change.price)
      body[current.orderType === OrderType.LIMIT ? 'limitPrice' : 'stopPrice'] = change.price.toNumber();
    if (change.volume) {
      const v = lotsToWireVolume(change.volume, s.lotSize);
      if (v === null)
        return denied('invalid_volume', `volume ${change.volume.toString()} is not a whole number of cents of units`);
      body.volume = v;
    }
    if (change.stopLoss) body.stopLoss = change.stopLoss.toNumber();
    if (change.takeProfit) body.takeProfit = change.takeProfit.toNumber();
    try {
      const events = await this.write(PT.AMEND_ORDER_REQ, body, (env) => env.payloadType === PT.EXECUTION_EVENT);
      return confirmed({
        brokerOrderId: orderId,
        brokerTime: this.eventTime(events),
        raw: events.map((e) => e.payload),
      });
    } catch (err) {
      return writeFailure(err, 'amend order');
    }
  }

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    this.listeners.add(listener);
    // Execution events only flow to an authorised account: authorise now rather than at the first call.
    this.conn.ensureAccount(this.ctid, this.timeoutMs).catch(() => {});
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    this.offEvents();
    await this.opts.onClose?.();
  }

  // ---- internals: requests ------------------------------------------------------------------------------

  private async read<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw readError(err, what);
    }
  }

  private async call(payloadType: number, body: Record<string, unknown>, signal?: AbortSignal): Promise<Envelope> {
    const [env] = await this.conn.accountRequest(this.ctid, payloadType, body, {
      idempotent: true,
      timeoutMs: this.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    return env!;
  }

  private write(
    payloadType: number,
    body: Record<string, unknown>,
    done: (env: Envelope) => boolean,
  ): Promise<Envelope[]> {
    return this.conn.accountRequest(this.ctid, payloadType, body, {
      timeoutMs: this.timeoutMs,
      collect: (env) => done(env),
      write: true,
    });
  }

  /** Every reconcile answer also (re)starts the position and order views, when it can be placed among the events. */
  private async reconcile(): Promise<ReconcileResMsg> {
    const session = this.conn.accountSession(this.ctid);
    const reads = { positions: this.positions.beginRead(session), orders: this.orders.beginRead(session) };
    const rec = (await this.call(PT.RECONCILE_REQ, {})).payload as unknown as ReconcileResMsg;
    const now = this.conn.accountSession(this.ctid);
    this.positions.endRead(reads.positions, rec.position ?? [], now);
    this.orders.endRead(reads.orders, rec.order ?? [], now);
    return rec;
  }

  /** Order history in windows of at most a week (the older protocol limit, still the safe choice). */
  private async orderHistory(from: Date | undefined, to: Date | undefined): Promise<OrderMsg[]> {
    const end = (to ?? new Date(Date.now() + 60_000)).getTime();
    let start = (from ?? new Date(end - this.historyMs)).getTime();
    const out: OrderMsg[] = [];
    while (start < end) {
      const stop = Math.min(end, start + WEEK_MS);
      const res = (await this.call(PT.ORDER_LIST_REQ, { fromTimestamp: String(start), toTimestamp: String(stop) }))
        .payload as unknown as OrderListResMsg;
      out.push(...(res.order ?? []));
      start = stop;
    }
    return out;
  }

  /**
   * Every deal from `from` to `to`. The window is split into spans of at most a week: older versions of the
   * protocol text state "Validation: toTimestamp - fromTimestamp <= 604800000 (1 week)" for this request, the
   * current one states no limit; a week is safe under both. Within a span, while the server says `hasMore`, the
   * next page starts at the latest executionTimestamp seen (inclusive, so deals sharing that millisecond are not
   * skipped; dealId drops the ones already had). A page that brings nothing new moves one millisecond on, so
   * the loop always ends; only more than DEAL_PAGE_ROWS deals within one millisecond could then lose some.
   */
  private async dealHistory(from: Date, to: Date): Promise<DealMsg[]> {
    const end = to.getTime();
    const byId = new Map<string, DealMsg>();
    for (let start = from.getTime(); start < end; ) {
      const stop = Math.min(end, start + WEEK_MS);
      for (let pageFrom = start; pageFrom <= stop; ) {
        const res = (
          await this.call(PT.DEAL_LIST_REQ, {
            fromTimestamp: String(pageFrom),
            toTimestamp: String(stop),
            maxRows: DEAL_PAGE_ROWS,
          })
        ).payload as unknown as DealListResMsg;
        const page = res.deal ?? [];
        let fresh = 0;
        let latest = pageFrom;
        for (const d of page) {
          const id = String(d.dealId);
          if (!byId.has(id)) {
            byId.set(id, d);
            fresh++;
          }
          latest = Math.max(latest, Number(d.executionTimestamp));
        }
        if (!res.hasMore || page.length === 0) break;
        pageFrom = fresh === 0 ? latest + 1 : latest;
      }
      start = stop;
    }
    return [...byId.values()];
  }

  /**
   * A position's symbol and volume from the view the execution events keep (no request), else read. Closes that
   * need a read while one is already on its way share it.
   * One reconcile per close doubled the requests of a mass close (and each answer lists every position), so
   * 1,200 closes behind 50 req/s took twice as long. A joiner's reading may predate its call by one round
   * trip: the same race a lookup-then-close always had; a volume changed meanwhile is a partial close or a
   * refusal, which the caller sees and handles.
   */
  private lookup: Promise<ReconcileResMsg> | null = null;

  private async positionTarget(positionId: string): Promise<PositionTarget | null> {
    const known = this.positions.get(positionId, this.conn.accountSession(this.ctid));
    if (known) return known;
    this.lookup ??= this.authorisedThenReconcile().finally(() => {
      this.lookup = null;
    });
    const p = ((await this.lookup).position ?? []).find((x) => String(x.positionId) === positionId);
    return p ? { symbolId: String(p.tradeData.symbolId), volume: String(p.tradeData.volume) } : null;
  }

  /**
   * A pending order's type and symbol from the order view (no request), else read, like a close's position. The
   * read is its own, not one already on its way: that one may predate an order placed just before the amendment,
   * which it would then call missing; amendments fan out one per account, so there is little to share anyway.
   */
  private async orderTarget(orderId: string): Promise<OrderTarget | null> {
    const known = this.orders.get(orderId, this.conn.accountSession(this.ctid));
    if (known) return known;
    const o = ((await this.authorisedThenReconcile()).order ?? []).find((x) => String(x.orderId) === orderId);
    return o ? { orderType: o.orderType, symbolId: String(o.tradeData.symbolId) } : null;
  }

  /**
   * Authorised first, so the read is sent within the session it is answered in and can make the view trusted:
   * sent before the (lazy) authorisation, the first close after a start or reconnect would read twice. A failure
   * here is left to the read itself to report.
   */
  private async authorisedThenReconcile(): Promise<ReconcileResMsg> {
    if (this.conn.accountSession(this.ctid) === null)
      await this.conn.ensureAccount(this.ctid, this.timeoutMs).catch(() => undefined);
    return this.reconcile();
  }

  async listSymbols(): Promise<string[]> {
    return [...(await this.loadLightSymbols()).values()].flatMap((s) => (s.symbolName ? [s.symbolName] : []));
  }

  // ---- internals: symbols and prices --------------------------------------------------------------------

  private loadLightSymbols(): Promise<Map<string, LightSymbolMsg>> {
    this.lightSymbols ??= this.call(PT.SYMBOLS_LIST_REQ, { includeArchivedSymbols: false })
      .then(
        (env) =>
          new Map(((env.payload as { symbol?: LightSymbolMsg[] }).symbol ?? []).map((s) => [String(s.symbolId), s])),
      )
      .catch((err: unknown) => {
        this.lightSymbols = null;
        throw err;
      });
    return this.lightSymbols;
  }

  private async symbolByName(name: string): Promise<SymbolInfo | null> {
    const light = [...(await this.loadLightSymbols()).values()].find((s) => s.symbolName === name);
    return light ? this.symbolById(String(light.symbolId)) : null;
  }

  private async symbolById(id: string): Promise<SymbolInfo | null> {
    const cached = this.symbols.get(id);
    if (cached) return cached;
    let p = this.symbolLoads.get(id);
    if (!p) {
      p = (async () => {
        const light = (await this.loadLightSymbols()).get(id);
        if (!light) return null;
        const env = await this.call(PT.SYMBOL_BY_ID_REQ, { symbolId: [id] });
        const full = ((env.payload as { symbol?: SymbolMsg[] }).symbol ?? []).find((x) => String(x.symbolId) === id);
        if (!full) return null;
        const info = parseSymbol(light, full);
        this.symbols.set(id, info);
        return info;
      })().finally(() => this.symbolLoads.delete(id));
      this.symbolLoads.set(id, p);
    }
    return p;
  }

  /** Once per account (the list is the broker's, asked per account); a fetch given up on (`signal`) is asked again. */
  private async assetNames(signal?: AbortSignal): Promise<Map<string, string>> {
    this.assets ??= this.call(PT.ASSET_LIST_REQ, {}, signal)
      .then(
        (env) => new Map(((env.payload as { asset?: AssetMsg[] }).asset ?? []).map((a) => [String(a.assetId), a.name])),
      )
      .catch((err: unknown) => {
        this.assets = null;
        throw err;
      });
    return this.assets;
  }

  /** Latest bid/ask: subscribed once per connection, then kept current by the pushed spot events. */
  private async spot(s: SymbolInfo): Promise<{ bid: Decimal; ask: Decimal } | null> {
    const cached = this.spots.get(s.symbolId);
    // A subscription lives on one link of one connection: a reconnect or a move to another connection ends it.
    const conn = this.conn;
    if (cached && cached.conn === conn && cached.epoch === conn.reconnects && conn.connected) return cached;
    this.spots.delete(s.symbolId);
    const arrived = new Promise<void>((resolve) => {
      const list = this.spotWaiters.get(s.symbolId) ?? [];
      list.push(resolve);
      this.spotWaiters.set(s.symbolId, list);
    });
    try {
      await this.call(PT.SUBSCRIBE_SPOTS_REQ, { symbolId: [s.symbolId] });
    } catch (err) {
      if (!(err instanceof Error && /ALREADY_SUBSCRIBED/.test(err.message))) return null;
    }
    await Promise.race([arrived, new Promise((r) => setTimeout(r, Math.min(1000, this.timeoutMs)))]);
    return this.spots.get(s.symbolId) ?? null;
  }

  /** Market orders take SL/TP only as distances from the fill; we measure them from the current quote. */
  private async relativeStops(
    s: SymbolInfo,
    side: 'buy' | 'sell',
    stops: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<{ fields: Record<string, string> } | { denied: string }> {
    const q = await this.spot(s).catch(() => null);
    if (!q) return { fields: {} };
    const ref = side === 'buy' ? q.ask : q.bid;
    const dir = side === 'buy' ? 1 : -1;
    const fields: Record<string, string> = {};
    if (stops.stopLoss) {
      if (ref.minus(stops.stopLoss).mul(dir).lte(0))
        return { denied: `stop loss ${stops.stopLoss} is on the wrong side of ${ref} for a ${side}` };
      fields.relativeStopLoss = toRelative(ref.minus(stops.stopLoss));
    }
    if (stops.takeProfit) {
      if (stops.takeProfit.minus(ref).mul(dir).lte(0))
        return { denied: `take profit ${stops.takeProfit} is on the wrong side of ${ref} for a ${side}` };
      fields.relativeTakeProfit = toRelative(stops.takeProfit.minus(ref));
    }
    return { fields };
  }

  /** After the fill, set the exact SL/TP asked for when the distances landed elsewhere (price moved, rounding). */
  private async fixStops(
    out: ConfirmedOutcome,
    events: Envelope[],
    s: SymbolInfo,
    want: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<void> {
    const pos = [...events]
      .reverse()
      .map(exec)
      .find((e) => e.position)?.position;
    const has = (v: number | undefined) => (v === undefined || v === 0 ? null : priceFromDouble(v, s.digits));
    const same = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));
    if (pos && same(has(pos.stopLoss), want.stopLoss) && same(has(pos.takeProfit), want.takeProfit)) return;
    const amended = await this.modifyPosition(out.positionId!, want);
    if (amended.kind !== 'confirmed') out.raw = { events: out.raw, protection: amended };
  }

  // ---- internals: events ------------------------------------------------------------------------------

  /** A new-order or close request is answered once the order is filled, pending, or finished otherwise. */
  private orderDone(env: Envelope, isMarket: boolean): boolean {
    if (env.payloadType !== PT.EXECUTION_EVENT) return false;
    const e = exec(env);
    switch (e.executionType) {
      case ExecutionType.ORDER_ACCEPTED:
        return !isMarket;
      case ExecutionType.ORDER_FILLED:
      case ExecutionType.ORDER_CANCELLED:
      case ExecutionType.ORDER_EXPIRED:
        return true;
      case ExecutionType.ORDER_PARTIAL_FILL:
        // Still working when the order stays accepted (more fills may follow); done once it is final.
        return e.order?.orderStatus !== OrderStatus.ACCEPTED;
      default:
        return false;
    }
  }

  private fillOutcome(events: Envelope[], s: SymbolInfo): ConfirmedOutcome | null {
    const fills = events
      .map(exec)
      .filter(
        (e) =>
          e.deal &&
          (e.executionType === ExecutionType.ORDER_FILLED || e.executionType === ExecutionType.ORDER_PARTIAL_FILL),
      );
    if (fills.length === 0) return null;
    const last = fills.at(-1)!;
    const deals = fills.map((f) => f.deal!) as DealMsg[];
    const filled = deals.reduce((sum, d) => sum.plus(closedVolume(d, s) ?? dec(d.filledVolume).div(s.lotSize)), dec(0));
    const d = deals.at(-1)!;
    return confirmed({
      brokerOrderId: String(d.orderId),
      positionId: String(d.positionId ?? last.position?.positionId),
      filledVolume: filled,
      fillPrice: d.executionPrice !== undefined ? priceFromDouble(d.executionPrice, s.digits) : null,
      brokerTime: msToIso(d.executionTimestamp),
      raw: events.map((e) => e.payload),
    });
  }

  private acceptedOutcome(events: Envelope[]): ConfirmedOutcome {
    const o = events.map(exec).find((e) => e.order)?.order;
    return confirmed({
      brokerOrderId: o ? String(o.orderId) : null,
      positionId: null,
      brokerTime: msToIso(o?.utcLastUpdateTimestamp),
      raw: events.map((e) => e.payload),
    });
  }

  private eventTime(events: Envelope[]): string | null {
    const e = events.map(exec).at(-1);
    return (
      msToIso(e?.deal?.executionTimestamp ?? e?.order?.utcLastUpdateTimestamp ?? e?.position?.utcLastUpdateTimestamp) ??
      new Date().toISOString()
    );
  }

  private onEvent(env: Envelope): void {
    if (env.payloadType === PT.SPOT_EVENT) {
      const sp = env.payload as unknown as SpotEventMsg;
      const id = String(sp.symbolId);
      const prev = this.spots.get(id);
      const bid = sp.bid !== undefined ? dec(sp.bid).div(RELATIVE_PRICE_SCALE) : prev?.bid;
      const ask = sp.ask !== undefined ? dec(sp.ask).div(RELATIVE_PRICE_SCALE) : prev?.ask;
      if (bid && ask) this.spots.set(id, { bid, ask, conn: this.conn, epoch: this.conn.reconnects });
      for (const w of this.spotWaiters.get(id)?.splice(0) ?? []) w();
      return;
    }
    if (env.payloadType !== PT.EXECUTION_EVENT) return;
    const ev = exec(env);
    // Whether anyone listens or not: the view must see every event of the session to be trusted.
    try {
      this.positions.apply(ev);
    } catch {
      this.positions.distrust();
    }
    try {
      this.orders.apply(ev);
    } catch {
      this.orders.distrust();
    }
    if (this.listeners.size === 0) return;
    // Ordered delivery even when a symbol must be fetched first.
    this.eventChain = this.eventChain.then(async () => {
      const ids = [ev.position?.tradeData.symbolId, ev.order?.tradeData.symbolId, ev.deal?.symbolId].filter(
        (x): x is string => x !== undefined,
      );
      for (const id of ids) await this.symbolById(String(id)).catch(() => null);
      let events: BrokerEvent[];
      try {
        events = parseExecutionEvent(ev, (id) => this.symbols.get(id));
      } catch {
        // An event we cannot read (a field out of range) is dropped alone; the watcher's resync diffs the account.
        // Thrown out of the chain, it left the chain rejected: every later event of the account was skipped, and
        // the rejection, unhandled, ends the process.
        return;
      }
      for (const out of events) {
        for (const l of this.listeners) {
          try {
            l(out);
          } catch {
            // A listener's failure must not stop the stream for the others.
          }
        }
      }
    });
    // Whatever else throws above (a message missing a part it must have) must not stop the chain either.
    this.eventChain = this.eventChain.catch(() => undefined);
  }
}

const exec = (env: Envelope): ExecutionEventMsg => env.payload as unknown as ExecutionEventMsg;

/** Numeric ids (int64 as decimal strings) compared as numbers, shorter first; others as text. */
const compareIds = (a: string, b: string): number => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
