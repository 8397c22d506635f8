import { Decimal, type DecimalValue, dec, floorToStep, isMultipleOf } from '../domain/decimal.js';
import type { Order, OrderType, Position, Side } from '../domain/types.js';
import { SimFaultInjector } from './faults.js';
import { defaultInstruments, type SimInstrumentDef } from './instruments.js';
import { Market, type MarketSnapshot } from './market.js';
import type {
  Quote,
  SimAccount,
  SimAccountInit,
  SimAccountState,
  SimBrokerApi,
  SimDeal,
  SimEvent,
  SimInstrument,
  SimOrderRequest,
  SimPlaceOptions,
  SimWriteResult,
} from './contract.js';
import { SimError } from './contract.js';

/** Re-exported for tests that throw or match it; clients import it from the contract. */
export { SimError };

export interface SimBrokerOptions {
  seed?: number;
  instruments?: SimInstrumentDef[];
  /** Output of a previous `snapshot()`. */
  snapshot?: unknown;
  /** Clock; tests pin it to make history windows exact. */
  now?: () => Date;
}

interface PositionRec {
  id: string;
  symbol: string;
  side: Side;
  volume: Decimal;
  openPrice: Decimal;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  openedAt: string;
  tag: string | null;
  magic?: number | null;
  comment?: string | null;
}

interface Book {
  account: SimAccount;
  positions: Map<string, PositionRec>;
  pending: Map<string, Order>;
  history: Order[];
  deals: SimDeal[];
  /** Lookups by id over history and deals, built as they are read (see `indexed`); dropped when history is trimmed. */
  index?: HistoryIndex;
}

/**
 * History and deals are only ever appended to (and cut from the front by trimHistory, which drops the index), so
 * the index catches up with what was appended since it was last read instead of rescanning: a lookup per event
 * stays O(1) however long the account has traded (a soak's accounts reach thousands of deals).
 */
interface HistoryIndex {
  orders: Map<string, Order>;
  dealsByPosition: Map<string, SimDeal[]>;
  dealsByOrder: Map<string, SimDeal[]>;
  /** The newest history entry under each tag. */
  lastByTag: Map<string, Order>;
  /**
   * Entry i: the latest creation time (ms) among history[0..i], and the latest deal time among deals[0..i]. A
   * window read from the newest end stops where this falls below its start: nothing older can be in it, however
   * the clock moved (see `windowFromEnd`).
   */
  historyCreatedUpTo: number[];
  dealsTimeUpTo: number[];
  historyLength: number;
  dealsLength: number;
}

/** Real brokers hand out 64-bit tickets; starting past 2^53 makes every front end keep ids as strings. */
const ID_BASE = 7_200_000_000_000_000_000n;
const SNAPSHOT_VERSION = 1;
const MAX_TAG_LENGTH = 64;
const ORDER_DECIMALS = ['volume', 'filledVolume', 'price', 'stopLoss', 'takeProfit'];
const POSITION_DECIMALS = ['volume', 'openPrice', 'stopLoss', 'takeProfit'];
const DEAL_DECIMALS = ['volume', 'price', 'profit'];

const opposite = (s: Side): Side => (s === 'buy' ? 'sell' : 'buy');
const sign = (s: Side): number => (s === 'buy' ? 1 : -1);
const money = (v: Decimal): Decimal => v.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/**
 * One simulated market and its accounts. Market orders never emit order_* events: those describe pending
 * orders only, so a watcher sees a market trade once (as position_*), and a pending fill as the position
 * event it caused followed by order_filled (which then carries the position id).
 */
export class SimBroker implements SimBrokerApi {
  readonly faults = new SimFaultInjector();
  private readonly defs = new Map<string, SimInstrumentDef>();
  private readonly market: Market;
  private readonly books = new Map<string, Book>();
  private readonly listeners = new Set<(accountId: string, ev: SimEvent) => void>();
  private readonly commitListeners = new Set<(accountIds: string[]) => void>();
  /** Accounts changed by the write in progress; told to commit listeners when the outermost write ends. */
  private readonly touched = new Set<string>();
  private depth = 0;
  private readonly now: () => Date;
  private seq = 0;
  private accountSeq = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(opts: SimBrokerOptions = {}) {
    this.now = opts.now ?? (() => new Date());
    for (const d of opts.instruments ?? defaultInstruments()) this.defs.set(d.symbol, d);
    const snap = opts.snapshot === undefined ? undefined : parseSnapshot(opts.snapshot);
    this.market = new Market([...this.defs.values()], this.now, {
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
      ...(snap ? { snapshot: snap.market } : {}),
    });
    if (snap) this.restore(snap);
  }

  // ---- market -------------------------------------------------------------------------------------

  instruments(): SimInstrument[] {
    return [...this.defs.values()].map((d) => ({ ...d }));
  }

  instrument(symbolOrId: string | number): SimInstrument | null {
    const d =
      typeof symbolOrId === 'number'
        ? [...this.defs.values()].find((x) => x.numericId === symbolOrId)
        : this.defs.get(symbolOrId);
    return d ? { ...d } : null;
  }

  quote(symbol: string): Quote {
    this.def(symbol);
    return this.market.quote(symbol);
  }

  setPrice(symbol: string, mid: DecimalValue): void {
    this.def(symbol);
    this.write(null, () => {
      this.market.setMid(symbol, mid);
      this.afterPriceChange(symbol);
    });
  }

  start(intervalMs = 1000): void {
    this.stop();
    this.timer = setInterval(() => {
      this.write(null, () => {
        this.market.step();
        for (const s of this.defs.keys()) this.afterPriceChange(s);
      });
    }, intervalMs);
    // The feed must never keep a process (or a test run) alive on its own.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  // ---- accounts -----------------------------------------------------------------------------------

  createAccount(init: SimAccountInit): SimAccount {
    return this.write(null, () => {
      const n = ++this.accountSeq;
      const id = init.id ?? String(1_000_000 + n);
      if (this.books.has(id)) throw new SimError('REJECTED', `account ${id} already exists`);
      const account: SimAccount = {
        id,
        login: init.login ?? String(50_000_000 + n),
        currency: init.currency ?? 'USD',
        hedging: init.hedging ?? true,
        leverage: init.leverage ?? 100,
        balance: dec(init.balance),
        meta: { ...(init.meta ?? {}) },
        createdAt: this.now().toISOString(),
      };
      this.books.set(id, { account, positions: new Map(), pending: new Map(), history: [], deals: [] });
      this.touched.add(id);
      return { ...account, meta: { ...account.meta } };
    });
  }

  account(id: string): SimAccount | null {
    const b = this.books.get(id);
    return b ? { ...b.account, meta: { ...b.account.meta } } : null;
  }

  accounts(): SimAccount[] {
    return [...this.books.keys()].map((id) => this.account(id)!);
  }

  state(accountId: string): SimAccountState {
    const b = this.book(accountId);
    let unrealized = dec(0);
    let margin = dec(0);
    for (const p of b.positions.values()) {
      unrealized = unrealized.plus(this.pnl(b, p, this.closePrice(p.symbol, p.side)));
      margin = margin.plus(this.margin(b, p.symbol, p.volume));
    }
    const equity = b.account.balance.plus(unrealized);
    return {
      balance: b.account.balance,
      equity,
      margin,
      freeMargin: equity.minus(margin),
      currency: b.account.currency,
      unrealizedPnl: unrealized,
    };
  }

  positions(accountId: string): Position[] {
    const b = this.book(accountId);
    return [...b.positions.values()].map((p) => this.view(b, p));
  }

  /** One open position (null when closed or unknown): a single lookup, where positions() values every one. */
  positionById(accountId: string, positionId: string): Position | null {
    const b = this.book(accountId);
    const p = b.positions.get(positionId);
    return p ? this.view(b, p) : null;
  }

  /**
   * With a `from`, history is read from its newest end only as far back as the window can still match: the
   * front ends ask for the last seconds after every write (TradeLocker's ordersHistory, cTrader's order list),
   * and copying and parsing the whole history each time made the simulator slower the longer it ran.
   */
  orders(accountId: string, q: { includeHistory?: boolean; from?: Date; to?: Date; symbol?: string } = {}): Order[] {
    const b = this.book(accountId);
    const keep = (o: Order) => (!q.symbol || o.symbol === q.symbol) && inWindow(o.createdAt, q.from, q.to);
    const pending = [...b.pending.values()].filter(keep);
    const found = q.includeHistory
      ? pending.concat(windowFromEnd(b.history, this.indexed(b).historyCreatedUpTo, q.from, keep))
      : pending;
    return found.sort((x, y) => compareIds(x.id, y.id)).map((o) => ({ ...o }));
  }

  /** One order, pending or final, by id (undefined when unknown or trimmed from history). */
  order(accountId: string, orderId: string): Order | undefined {
    const b = this.book(accountId);
    const o = b.pending.get(orderId) ?? this.indexed(b).orders.get(orderId);
    return o ? { ...o } : undefined;
  }

  /** Oldest first; with a `from`, read from the newest end as far back as the window can match (as orders). */
  deals(accountId: string, q: { from?: Date; to?: Date } = {}): SimDeal[] {
    const b = this.book(accountId);
    return windowFromEnd(b.deals, this.indexed(b).dealsTimeUpTo, q.from, (d) => inWindow(d.time, q.from, q.to)).map(
      (d) => ({ ...d }),
    );
  }

  /** The deals of one position or of one order, oldest first. */
  dealsOf(accountId: string, of: { positionId: string } | { orderId: string }): SimDeal[] {
    const idx = this.indexed(this.book(accountId));
    const list = 'positionId' in of ? idx.dealsByPosition.get(of.positionId) : idx.dealsByOrder.get(of.orderId);
    return (list ?? []).map((d) => ({ ...d }));
  }

  findByTag(accountId: string, tag: string): { position?: Position; order?: Order } {
    const b = this.book(accountId);
    const out: { position?: Position; order?: Order } = {};
    const p = [...b.positions.values()].find((x) => x.tag === tag);
    if (p) out.position = this.view(b, p);
    // A filled or cancelled order still proves the request reached us, so history counts too.
    const o = [...b.pending.values()].find((x) => x.tag === tag) ?? this.indexed(b).lastByTag.get(tag);
    if (o) out.order = { ...o };
    return out;
  }

  onEvent(listener: (accountId: string, ev: SimEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called when a write (or a price tick that filled or closed something) is complete, synchronously and before
   * the write returns, with the accounts it may have changed: a journal written here is on disk before any
   * front end answers. Nested writes (close-by closes through closePosition) report once, at the outermost end.
   */
  onCommit(listener: (accountIds: string[]) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** What journalRecord would report as `lengths`, without encoding the account (a start reads 10,000 of them). */
  journalLengths(accountId: string): { history: number; deals: number } {
    const b = this.book(accountId);
    return { history: b.history.length, deals: b.deals.length };
  }

  /** One account's state for an append-only journal, with its history and deals from the given lengths on. */
  journalRecord(
    accountId: string,
    from: { history: number; deals: number },
  ): { record: Record<string, unknown>; lengths: { history: number; deals: number } } {
    const b = this.book(accountId);
    const record = encode({
      seq: this.seq,
      accountSeq: this.accountSeq,
      account: b.account,
      positions: [...b.positions.values()],
      pending: [...b.pending.values()],
      historyFrom: from.history,
      history: b.history.slice(from.history),
      dealsFrom: from.deals,
      deals: b.deals.slice(from.deals),
    }) as Record<string, unknown>;
    return { record, lengths: { history: b.history.length, deals: b.deals.length } };
  }

  private write<T>(accountId: string | null, fn: () => T): T {
    if (accountId !== null) this.touched.add(accountId);
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
      if (this.depth === 0 && this.touched.size > 0) {
        const ids = [...this.touched].filter((id) => this.books.has(id));
        this.touched.clear();
        // A failing journal must fail the write's answer: the caller would otherwise confirm what is not durable.
        if (ids.length > 0) for (const l of this.commitListeners) l(ids);
      }
    }
  }

  // ---- writes -------------------------------------------------------------------------------------

  placeOrder(accountId: string, req: SimOrderRequest, opts: SimPlaceOptions = {}): SimWriteResult {
    return this.write(accountId, () => {
      const b = this.book(accountId);
      const d = this.def(req.symbol);
      this.checkVolume(d, req.volume);
      if (req.tag.length > MAX_TAG_LENGTH) throw new SimError('REJECTED', `tag longer than ${MAX_TAG_LENGTH}`);
      if (req.positionId !== undefined) return this.closeBy(b, req);
      // A marketable limit executes like a market order, at the market price, which is the limit or better.
      const fillsNow =
        req.type === 'limit' && opts.marketableLimit === 'fill' && this.marketable(d, req.side, req.price ?? null);
      const price =
        req.type === 'market'
          ? null
          : fillsNow
            ? this.checkPriceGrid(d, req.type, req.price ?? null)
            : this.checkPendingPrice(d, req.type, req.side, req.price ?? null);
      const sl = req.stopLoss ?? null;
      const tp = req.takeProfit ?? null;
      this.checkStops(d, req.side, price === null || fillsNow ? this.closePrice(d.symbol, req.side) : price, sl, tp);

      const at = this.now().toISOString();
      const order: Order = {
        id: this.nextId(),
        symbol: d.symbol,
        side: req.side,
        type: req.type,
        volume: req.volume,
        filledVolume: dec(0),
        price,
        stopLoss: sl,
        takeProfit: tp,
        status: 'pending',
        positionId: null,
        createdAt: at,
        updatedAt: at,
        tag: req.tag,
        ...(req.magic !== undefined ? { magic: req.magic } : {}),
        ...(req.comment !== undefined ? { comment: req.comment } : {}),
      };
      if ((req.type !== 'market' && !fillsNow) || opts.refuseAs) {
        b.pending.set(order.id, order);
        this.emit(b, { kind: 'order_placed', order: { ...order } });
        if (opts.refuseAs) {
          // Taken, then refused by the dealing desk: it stays in history under its tag, nothing is filled.
          this.finish(b, order, opts.refuseAs);
          this.emit(b, { kind: 'order_cancelled', order: { ...order } });
        }
        return { order: { ...order }, position: null, deal: null };
      }
      let volume = req.volume;
      if (opts.partialRatio !== undefined && opts.partialRatio < 1) {
        volume = Decimal.max(floorToStep(req.volume.mul(opts.partialRatio), d.volumeStep), d.minVolume);
      }
      this.checkMargin(b, d, req.side, volume);
      const { position, deal } = this.fill(b, order, volume);
      b.history.push(order);
      return { order: { ...order }, position, deal };
    });
  }

  modifyPosition(
    accountId: string,
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Position {
    return this.write(accountId, () => {
      const b = this.book(accountId);
      const p = this.position(b, positionId);
      this.checkStops(
        this.def(p.symbol),
        p.side,
        this.closePrice(p.symbol, p.side),
        change.stopLoss,
        change.takeProfit,
      );
      if (!sameDec(p.stopLoss, change.stopLoss) || !sameDec(p.takeProfit, change.takeProfit)) {
        p.stopLoss = change.stopLoss;
        p.takeProfit = change.takeProfit;
        this.emit(b, { kind: 'position_modified', position: this.view(b, p) });
      }
      return this.view(b, p);
    });
  }

  closePosition(accountId: string, positionId: string, volume?: Decimal): SimWriteResult {
    return this.write(accountId, () => {
      const b = this.book(accountId);
      const p = this.position(b, positionId);
      const v = volume ?? p.volume;
      const d = this.def(p.symbol);
      const rest = p.volume.minus(v);
      if (v.lte(0) || !isMultipleOf(v, d.volumeStep) || rest.lt(0) || (rest.gt(0) && rest.lt(d.minVolume))) {
        throw new SimError('INVALID_VOLUME', `cannot close ${v} of ${p.volume}`);
      }
      return this.closeMarket(b, p, v, null);
    });
  }

  modifyOrder(
    accountId: string,
    orderId: string,
    change: { price?: Decimal; volume?: Decimal; stopLoss?: Decimal | null; takeProfit?: Decimal | null },
  ): Order {
    return this.write(accountId, () => {
      const b = this.book(accountId);
      const o = b.pending.get(orderId);
      if (!o) throw new SimError('ORDER_NOT_FOUND', `no pending order ${orderId}`);
      const d = this.def(o.symbol);
      const price = change.price === undefined ? o.price! : this.checkPendingPrice(d, o.type, o.side, change.price);
      const volume = change.volume ?? o.volume;
      this.checkVolume(d, volume);
      const sl = change.stopLoss === undefined ? o.stopLoss : change.stopLoss;
      const tp = change.takeProfit === undefined ? o.takeProfit : change.takeProfit;
      this.checkStops(d, o.side, price, sl, tp);
      Object.assign(o, { price, volume, stopLoss: sl, takeProfit: tp, updatedAt: this.now().toISOString() });
      this.emit(b, { kind: 'order_modified', order: { ...o } });
      return { ...o };
    });
  }

  cancelOrder(accountId: string, orderId: string): Order {
    return this.write(accountId, () => {
      const b = this.book(accountId);
      const o = b.pending.get(orderId);
      if (!o) throw new SimError('ORDER_NOT_FOUND', `no pending order ${orderId}`);
      this.finish(b, o, 'cancelled');
      this.emit(b, { kind: 'order_cancelled', order: { ...o } });
      return { ...o };
    });
  }

  /**
   * Keeps only the newest `keep` finished orders and deals of each account (persistence calls it when it folds
   * the journal, so journal offsets stay valid): what a tag lookup or a history window of recent activity needs,
   * without a history that grows for ever.
   */
  trimHistory(keep: number): void {
    for (const b of this.books.values()) {
      if (b.history.length <= keep && b.deals.length <= keep) continue;
      if (b.history.length > keep) b.history.splice(0, b.history.length - keep);
      if (b.deals.length > keep) b.deals.splice(0, b.deals.length - keep);
      // Entries left the front: rebuilt from what is kept at the next lookup.
      b.index = undefined;
    }
  }

  snapshot(): unknown {
    return {
      version: SNAPSHOT_VERSION,
      seq: this.seq,
      accountSeq: this.accountSeq,
      market: this.market.snapshot(),
      books: [...this.books.values()].map((b) =>
        encode({
          account: b.account,
          positions: [...b.positions.values()],
          pending: [...b.pending.values()],
          history: b.history,
          deals: b.deals,
        }),
      ),
    };
  }

  // ---- internals: fills and closes ----------------------------------------------------------------

  /** Fills `order` for `volume` at market; hedging opens a position, netting folds into the symbol's one. */
  private fill(b: Book, order: Order, volume: Decimal): { position: Position | null; deal: SimDeal } {
    const price = this.openPrice(order.symbol, order.side);
    order.status = 'filled';
    order.filledVolume = volume;
    order.updatedAt = this.now().toISOString();
    const net = b.account.hedging ? undefined : [...b.positions.values()].find((p) => p.symbol === order.symbol);
    if (!net) return this.open(b, order, volume, price);
    if (net.side === order.side) {
      const total = net.volume.plus(volume);
      net.openPrice = net.openPrice.mul(net.volume).plus(price.mul(volume)).div(total);
      net.volume = total;
      if (order.stopLoss !== null) net.stopLoss = order.stopLoss;
      if (order.takeProfit !== null) net.takeProfit = order.takeProfit;
      order.positionId = net.id;
      const deal = this.deal(b, order, net, volume, price, 'in', dec(0));
      this.emit(b, { kind: 'position_modified', position: this.view(b, net) });
      return { position: this.view(b, net), deal };
    }
    // Opposite side on a netting account: reduce, close, or (past zero) close and open the rest anew.
    const closing = Decimal.min(volume, net.volume);
    const closed = this.closeMarket(b, net, closing, order);
    const rest = volume.minus(closing);
    if (rest.lte(0)) return { position: closed.position, deal: closed.deal! };
    return this.open(b, order, rest, price);
  }

  private open(b: Book, order: Order, volume: Decimal, price: Decimal): { position: Position; deal: SimDeal } {
    const p: PositionRec = {
      id: this.nextId(),
      symbol: order.symbol,
      side: order.side,
      volume,
      openPrice: price,
      stopLoss: order.stopLoss,
      takeProfit: order.takeProfit,
      openedAt: order.updatedAt,
      tag: order.tag,
      ...(order.magic != null ? { magic: order.magic } : {}),
      ...(order.comment != null ? { comment: order.comment } : {}),
    };
    b.positions.set(p.id, p);
    order.positionId = p.id;
    const deal = this.deal(b, order, p, volume, price, 'in', dec(0));
    this.emit(b, { kind: 'position_opened', position: this.view(b, p) });
    return { position: this.view(b, p), deal };
  }

  /** Closes `volume` of `p` at market; `by` is the order doing it (a closing order is made when absent). */
  private closeMarket(b: Book, p: PositionRec, volume: Decimal, by: Order | null): SimWriteResult {
    const price = this.closePrice(p.symbol, p.side);
    const at = this.now().toISOString();
    const order: Order = by ?? {
      id: this.nextId(),
      symbol: p.symbol,
      side: opposite(p.side),
      type: 'market',
      volume,
      filledVolume: volume,
      price: null,
      stopLoss: null,
      takeProfit: null,
      status: 'filled',
      positionId: p.id,
      createdAt: at,
      updatedAt: at,
      tag: null,
    };
    if (!by) b.history.push(order);
    order.positionId = p.id;
    const profit = this.pnl(b, p, price, volume);
    b.account.balance = b.account.balance.plus(profit);
    const deal = this.deal(b, order, p, volume, price, 'out', profit);
    p.volume = p.volume.minus(volume);
    if (p.volume.lte(0)) {
      b.positions.delete(p.id);
      const last = { ...this.view(b, { ...p, volume }), currentPrice: price, profit };
      this.emit(b, { kind: 'position_closed', position: last, closedVolume: volume });
      return { order: { ...order }, position: null, deal };
    }
    this.emit(b, { kind: 'position_reduced', position: this.view(b, p), closedVolume: volume });
    return { order: { ...order }, position: this.view(b, p), deal };
  }

  /** An order that names a position closes (part of) it, as MT5's close-by-ticket does. */
  private closeBy(b: Book, req: SimOrderRequest): SimWriteResult {
    const p = this.position(b, req.positionId!);
    if (p.symbol !== req.symbol || p.side === req.side)
      throw new SimError('REJECTED', 'a closing order must be on the opposite side of the same symbol');
    if (req.volume.gt(p.volume)) throw new SimError('INVALID_VOLUME', `cannot close ${req.volume} of ${p.volume}`);
    const result = this.closePosition(b.account.id, p.id, req.volume);
    const idx = this.indexed(b);
    const o = idx.orders.get(result.order.id)!;
    o.tag = req.tag;
    // Tagged after the index read it (untagged) when the close was made: the newest order of all, so the tag's too.
    idx.lastByTag.set(req.tag, o);
    return { ...result, order: { ...o } };
  }

  private afterPriceChange(symbol: string): void {
    for (const b of this.books.values()) {
      for (const o of [...b.pending.values()]) if (o.symbol === symbol && this.triggered(o)) this.trigger(b, o);
      for (const p of [...b.positions.values()]) {
        if (p.symbol !== symbol) continue;
        const px = this.closePrice(symbol, p.side);
        const s = sign(p.side);
        const slHit = p.stopLoss !== null && px.minus(p.stopLoss).mul(s).lte(0);
        const tpHit = p.takeProfit !== null && px.minus(p.takeProfit).mul(s).gte(0);
        if (slHit || tpHit) this.closeMarket(b, p, p.volume, null);
      }
    }
  }

  private triggered(o: Order): boolean {
    const q = this.market.quote(o.symbol);
    const px = o.side === 'buy' ? q.ask : q.bid;
    const buyLimitLike = (o.side === 'buy') === (o.type === 'limit');
    return buyLimitLike ? px.lte(o.price!) : px.gte(o.price!);
  }

  private trigger(b: Book, o: Order): void {
    try {
      this.checkMargin(b, this.def(o.symbol), o.side, o.volume);
    } catch {
      this.finish(b, o, 'rejected');
      this.emit(b, { kind: 'order_cancelled', order: { ...o } });
      return;
    }
    b.pending.delete(o.id);
    b.history.push(o);
    this.fill(b, o, o.volume);
    this.emit(b, { kind: 'order_filled', order: { ...o } });
  }

  private finish(b: Book, o: Order, status: 'cancelled' | 'rejected'): void {
    o.status = status;
    o.updatedAt = this.now().toISOString();
    b.pending.delete(o.id);
    b.history.push(o);
  }

  private deal(
    b: Book,
    order: Order,
    p: PositionRec,
    volume: Decimal,
    price: Decimal,
    entry: 'in' | 'out',
    profit: Decimal,
  ): SimDeal {
    const deal: SimDeal = {
      id: this.nextId(),
      orderId: order.id,
      positionId: p.id,
      symbol: p.symbol,
      side: entry === 'in' ? p.side : opposite(p.side),
      volume,
      price,
      entry,
      profit,
      time: this.now().toISOString(),
      tag: order.tag ?? p.tag,
    };
    b.deals.push(deal);
    return { ...deal };
  }

  // ---- internals: validation, prices, money -------------------------------------------------------

  private checkVolume(d: SimInstrumentDef, v: Decimal): void {
    if (!v.isFinite() || v.lt(d.minVolume) || v.gt(d.maxVolume) || !isMultipleOf(v, d.volumeStep)) {
      throw new SimError('INVALID_VOLUME', `volume ${v} outside ${d.minVolume}..${d.maxVolume} step ${d.volumeStep}`);
    }
  }

  private checkPriceGrid(d: SimInstrumentDef, type: OrderType, price: Decimal | null): Decimal {
    if (price === null || price.lte(0) || !isMultipleOf(price, d.tickSize))
      throw new SimError('INVALID_PRICE', `bad ${type} price ${price}`);
    return price;
  }

  /** A buy limit at or above the ask, or a sell limit at or below the bid, can trade right now. */
  private marketable(d: SimInstrumentDef, side: Side, price: Decimal | null): boolean {
    if (price === null) return false;
    const q = this.market.quote(d.symbol);
    return side === 'buy' ? price.gte(q.ask) : price.lte(q.bid);
  }

  private checkPendingPrice(d: SimInstrumentDef, type: OrderType, side: Side, price: Decimal | null): Decimal {
    if (type === 'market') throw new SimError('INVALID_PRICE', 'a market order has no price to change');
    this.checkPriceGrid(d, type, price);
    price = price!;
    const q = this.market.quote(d.symbol);
    const px = side === 'buy' ? q.ask : q.bid;
    const belowMarket = price.lt(px);
    const mustBeBelow = (side === 'buy') === (type === 'limit');
    if (belowMarket !== mustBeBelow || price.eq(px)) {
      throw new SimError(
        'INVALID_PRICE',
        `${side} ${type} at ${price} must be ${mustBeBelow ? 'below' : 'above'} ${px}`,
      );
    }
    return price;
  }

  /** SL below and TP above the reference for a buy (mirrored for a sell), on the tick grid. */
  private checkStops(d: SimInstrumentDef, side: Side, ref: Decimal, sl: Decimal | null, tp: Decimal | null): void {
    const s = sign(side);
    for (const [name, v, wantSign] of [
      ['stop loss', sl, -1],
      ['take profit', tp, 1],
    ] as const) {
      if (v === null) continue;
      if (
        v.lte(0) ||
        !isMultipleOf(v, d.tickSize) ||
        v
          .minus(ref)
          .mul(s * wantSign)
          .lte(0)
      ) {
        throw new SimError('INVALID_STOPS', `${name} ${v} is on the wrong side of ${ref} for a ${side}`);
      }
    }
  }

  private checkMargin(b: Book, d: SimInstrumentDef, side: Side, volume: Decimal): void {
    let delta = this.margin(b, d.symbol, volume);
    const net = b.account.hedging ? undefined : [...b.positions.values()].find((p) => p.symbol === d.symbol);
    if (net) {
      const after = net.volume
        .mul(sign(net.side))
        .plus(volume.mul(sign(side)))
        .abs();
      delta = this.margin(b, d.symbol, after).minus(this.margin(b, d.symbol, net.volume));
    }
    if (delta.gt(0) && this.state(b.account.id).freeMargin.minus(delta).lt(0)) {
      throw new SimError(
        'NOT_ENOUGH_MONEY',
        `needs ${money(delta)} margin, free ${money(this.state(b.account.id).freeMargin)}`,
      );
    }
  }

  private margin(b: Book, symbol: string, volume: Decimal): Decimal {
    const d = this.def(symbol);
    return money(
      volume
        .mul(d.contractSize)
        .mul(this.market.mid(symbol))
        .mul(this.rate(d, b.account.currency))
        .div(b.account.leverage),
    );
  }

  /** Profit in the account currency, to the cent. */
  private pnl(b: Book, p: PositionRec, price: Decimal, volume: Decimal = p.volume): Decimal {
    const d = this.def(p.symbol);
    return money(
      price.minus(p.openPrice).mul(volume).mul(d.contractSize).mul(sign(p.side)).mul(this.rate(d, b.account.currency)),
    );
  }

  /** Quote currency -> account currency through a listed pair, else 1 (good enough for a simulation). */
  private rate(d: SimInstrumentDef, currency: string): Decimal {
    if (d.quoteCurrency === currency) return dec(1);
    if (this.defs.has(`${currency}${d.quoteCurrency}`))
      return dec(1).div(this.market.mid(`${currency}${d.quoteCurrency}`));
    if (this.defs.has(`${d.quoteCurrency}${currency}`)) return this.market.mid(`${d.quoteCurrency}${currency}`);
    return dec(1);
  }

  private openPrice(symbol: string, side: Side): Decimal {
    const q = this.market.quote(symbol);
    return side === 'buy' ? q.ask : q.bid;
  }

  private closePrice(symbol: string, side: Side): Decimal {
    return this.openPrice(symbol, opposite(side));
  }

  private view(b: Book, p: PositionRec): Position {
    const currentPrice = this.closePrice(p.symbol, p.side);
    return { ...p, currentPrice, profit: this.pnl(b, p, currentPrice) };
  }

  private emit(b: Book, ev: Omit<SimEvent, 'at'>): void {
    this.touched.add(b.account.id);
    const full: SimEvent = { ...ev, at: this.now().toISOString() };
    for (const l of this.listeners) {
      try {
        l(b.account.id, full);
      } catch (err) {
        // A listener's bug must not half-apply a broker write; surface it outside the write instead.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private book(accountId: string): Book {
    const b = this.books.get(accountId);
    if (!b) throw new SimError('UNKNOWN_ACCOUNT', `no simulated account ${accountId}`);
    return b;
  }

  private def(symbol: string): SimInstrumentDef {
    const d = this.defs.get(symbol);
    if (!d) throw new SimError('UNKNOWN_SYMBOL', `unknown symbol ${symbol}`);
    return d;
  }

  private position(b: Book, id: string): PositionRec {
    const p = b.positions.get(id);
    if (!p) throw new SimError('POSITION_NOT_FOUND', `no position ${id}`);
    return p;
  }

  /** The book's index, brought up to date with what was appended to history and deals since its last use. */
  private indexed(b: Book): HistoryIndex {
    const idx: HistoryIndex = (b.index ??= {
      orders: new Map(),
      dealsByPosition: new Map(),
      dealsByOrder: new Map(),
      lastByTag: new Map(),
      historyCreatedUpTo: [],
      dealsTimeUpTo: [],
      historyLength: 0,
      dealsLength: 0,
    });
    for (; idx.historyLength < b.history.length; idx.historyLength++) {
      const o = b.history[idx.historyLength]!;
      idx.orders.set(o.id, o);
      if (o.tag !== null) idx.lastByTag.set(o.tag, o);
      idx.historyCreatedUpTo.push(latest(idx.historyCreatedUpTo, o.createdAt));
    }
    for (; idx.dealsLength < b.deals.length; idx.dealsLength++) {
      const d = b.deals[idx.dealsLength]!;
      append(idx.dealsByPosition, d.positionId, d);
      append(idx.dealsByOrder, d.orderId, d);
      idx.dealsTimeUpTo.push(latest(idx.dealsTimeUpTo, d.time));
    }
    return idx;
  }

  private nextId(): string {
    return (ID_BASE + BigInt(++this.seq)).toString();
  }

  private restore(s: ParsedSnapshot): void {
    this.seq = s.seq;
    this.accountSeq = s.accountSeq;
    for (const raw of s.books) {
      const account = decode<SimAccount>(raw['account'], ['balance']);
      const book: Book = {
        account,
        positions: new Map(
          list(raw['positions'])
            .map((p) => decode<PositionRec>(p, POSITION_DECIMALS))
            .map((p) => [p.id, p]),
        ),
        pending: new Map(
          list(raw['pending'])
            .map((o) => decode<Order>(o, ORDER_DECIMALS))
            .map((o) => [o.id, o]),
        ),
        history: list(raw['history']).map((o) => decode<Order>(o, ORDER_DECIMALS)),
        deals: list(raw['deals']).map((d) => decode<SimDeal>(d, DEAL_DECIMALS)),
      };
      this.books.set(account.id, book);
    }
  }
}

// ---- snapshot encoding -----------------------------------------------------------------------------

interface ParsedSnapshot {
  seq: number;
  accountSeq: number;
  market: MarketSnapshot;
  books: Record<string, unknown>[];
}

function parseSnapshot(raw: unknown): ParsedSnapshot {
  const s = raw as Partial<ParsedSnapshot> & { version?: unknown };
  if (!s || typeof s !== 'object' || s.version !== SNAPSHOT_VERSION || !Array.isArray(s.books) || !s.market) {
    throw new Error(`not a simulator snapshot of version ${SNAPSHOT_VERSION}`);
  }
  return { seq: Number(s.seq ?? 0), accountSeq: Number(s.accountSeq ?? 0), market: s.market, books: s.books };
}

function encode(v: unknown): unknown {
  if (Decimal.isDecimal(v)) return v.toString();
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
}

function decode<T>(raw: unknown, decimals: string[]): T {
  const o = { ...(raw as Record<string, unknown>) };
  for (const k of decimals) o[k] = o[k] === null || o[k] === undefined ? null : dec(o[k] as string);
  return o as T;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function inWindow(iso: string, from?: Date, to?: Date): boolean {
  const t = Date.parse(iso);
  return (!from || t >= from.getTime()) && (!to || t <= to.getTime());
}

function sameDec(a: Decimal | null, b: Decimal | null): boolean {
  return a === null || b === null ? a === b : a.eq(b);
}

/** Ticket ids are decimal strings of non-negative integers: the shorter is the smaller, then by digits. */
function compareIds(x: string, y: string): number {
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

function append<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** The running maximum of times (ms) extended by one ISO time; an unreadable time never raises it. */
function latest(upTo: number[], iso: string): number {
  const t = Date.parse(iso);
  const before = upTo.length > 0 ? upTo[upTo.length - 1]! : Number.NEGATIVE_INFINITY;
  return Number.isNaN(t) ? before : Math.max(before, t);
}

/**
 * The rows `keep` accepts, in their order, read from the newest end while a row at or before the cursor can
 * still be at or after `from` (`upTo[i]`: the latest time among rows[0..i]). Rows are appended roughly in time
 * order, so a window of the last seconds touches only its own rows; without `from` every row is read.
 * A row with an unreadable time is never in a window with a start, as inWindow decides.
 */
function windowFromEnd<T>(
  rows: readonly T[],
  upTo: readonly number[],
  from: Date | undefined,
  keep: (row: T) => boolean,
): T[] {
  const start = from ? from.getTime() : Number.NEGATIVE_INFINITY;
  const out: T[] = [];
  for (let i = rows.length - 1; i >= 0 && upTo[i]! >= start; i--) if (keep(rows[i]!)) out.push(rows[i]!);
  return out.reverse();
}
