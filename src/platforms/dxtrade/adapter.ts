import { Decimal } from '../../domain/decimal.js';
import { AppError } from '../../domain/errors.js';
import type { AccountInfo, Deal, InstrumentSpec, Order, Position } from '../../domain/types.js';
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
import { denied } from '../adapter.js';
import { PollingWatcher } from '../polling-watcher.js';
import { indexTags } from '../tag-index.js';
import { DXTRADE_TAG_MAX, dxCapabilities } from './capabilities.js';
import { DxBook } from './book.js';
import { readError, writeFailure } from './errors.js';
import { type DxAccountRef, listOf, parseInstrument, parseMetrics, parseUser } from './parse.js';
import { DxRawClient, type WireResult } from './raw-client.js';
import { openOrder, protection, withStops } from './requests.js';
import { DxSession } from './session.js';
import {
  cancelPending,
  changePending,
  closeOpen,
  notSent,
  setProtection,
  settleByCode,
  type WriteResult,
} from './writes.js';

const ONE = new Decimal(1);

export interface DxAdapterOptions {
  /** Ends with /dxsca-web. */
  baseUrl: string;
  username: string;
  domain: string;
  password: string;
  /** The account code (e.g. `default:1234`). */
  account: string;
  /** Known at connect time (Account Details isPositionBased); the user read confirms it. */
  hedging?: boolean;
  timeoutMs?: number;
  pollIntervalMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

/**
 * BrokerAdapter over the DXtrade REST API. Reads log in again once after a 401 and repeat; writes go out once and
 * a lost answer is `unresolved`, settled later by orderCode (our correlation tag). SL/TP ride with an open as
 * IF-THEN THEN orders and live afterwards as position-attached protection orders.
 */
export class DxTradeAdapter implements BrokerAdapter {
  private readonly raw: DxRawClient;
  private readonly session: DxSession;
  private readonly book: DxBook;
  private ref: DxAccountRef | null = null;
  private ready: Promise<DxAccountRef> | null = null;
  private lotSizes = new Map<string, Decimal>();
  private readonly specs = new Map<string, InstrumentSpec | null>();
  private watcher: PollingWatcher | null = null;
  private closed = false;

  constructor(private readonly opts: DxAdapterOptions) {
    this.raw = new DxRawClient({
      baseUrl: opts.baseUrl,
      timeoutMs: opts.timeoutMs ?? 10_000,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    this.session = new DxSession(
      this.raw,
      { username: opts.username, domain: opts.domain, password: opts.password },
      opts.now,
    );
    this.book = new DxBook(
      (what, call, parse) => this.read(what, call, parse),
      this.raw,
      opts.account,
      (s) => this.lotOf(s),
    );
  }

  get capabilities(): Capabilities {
    return dxCapabilities({ hedging: this.ref?.hedging ?? this.opts.hedging ?? true });
  }

  async connect(): Promise<void> {
    await this.ensureReady();
  }

  // ---- reads --------------------------------------------------------------------------------------

  async accountInfo(): Promise<AccountInfo> {
    const ref = await this.ensureReady();
    const m = await this.read('account metrics', (t) => this.raw.metrics(t, this.opts.account), parseMetrics);
    return { balance: m.balance, equity: m.equity, currency: ref.currency, brokerAccountNumber: ref.account };
  }

  async listSymbols(): Promise<string[]> {
    await this.ensureReady();
    return [...this.lotSizes.keys()];
  }

  async instrument(symbol: string): Promise<InstrumentSpec | null> {
    if (this.specs.has(symbol)) return this.specs.get(symbol)!;
    const general = await this.read(
      `instrument ${symbol}`,
      (t) => this.raw.instrument(t, symbol),
      (b) => b,
    );
    const details = await this.read(
      `instrument ${symbol} details`,
      (t) => this.raw.instrumentDetails(t, this.opts.account, symbol),
      (b) => b,
    );
    const spec = parseInstrument(general, details, symbol);
    if (spec) this.lotSizes.set(symbol, spec.contractSize);
    this.specs.set(symbol, spec);
    return spec;
  }

  async listPositions(): Promise<Position[]> {
    return (await this.book.snapshot()).positions;
  }

  async listOrders(query: OrderQuery = {}): Promise<Order[]> {
    const { orders } = await this.book.snapshot();
    let all = orders;
    if (query.includeHistory) {
      const history = await this.book.history({ from: query.from, to: query.to });
      all = [...orders, ...history.filter((o) => o.order.status !== 'pending').map((o) => o.order)];
    }
    return query.symbol ? all.filter((o) => o.symbol === query.symbol) : all;
  }

  async findByTag(tag: string): Promise<TagLookup> {
    return (await this.tagIndex(new Date(Date.now() - 24 * 3600_000))).get(tag) ?? { found: false };
  }

  async tagIndex(since: Date): Promise<ReadonlyMap<string, TagLookup>> {
    const history = await this.book.history({ from: since });
    const { positions, orders } = await this.book.snapshot(history);
    return indexTags(
      positions,
      orders,
      history.map((o) => o.order),
    );
  }

  async listDeals(since: Date): Promise<Deal[]> {
    return this.book.deals(since);
  }

  // ---- writes -------------------------------------------------------------------------------------

  async placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    if (req.tag.length === 0 || req.tag.length > DXTRADE_TAG_MAX)
      return denied('tag_too_long', `orderCode holds 1 to ${DXTRADE_TAG_MAX} characters, tag has ${req.tag.length}`);
    if (!req.volume.isFinite() || req.volume.lte(0)) return denied('invalid_volume', 'volume must be positive');
    if (req.type !== 'market' && (!req.price || req.price.lte(0)))
      return denied('price_required', `a ${req.type} order needs a price`);
    let ref: DxAccountRef;
    try {
      ref = await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    const stops = [
      ...(req.stopLoss ? [{ kind: 'sl' as const, level: req.stopLoss }] : []),
      ...(req.takeProfit ? [{ kind: 'tp' as const, level: req.takeProfit }] : []),
    ];
    if (stops.length > 0 && !ref.hedging)
      return denied('capability_missing', 'stopLossOnOpen: a netting DXtrade account takes no order groups');
    const open = openOrder({ ...req, volume: req.volume.mul(this.lotOf(req.symbol)), positionBased: ref.hedging });
    const then = stops.map((s) =>
      protection({ code: `${s.kind}-${req.tag}`, symbol: req.symbol, positionSide: req.side, ...s }),
    );
    const sentAt = Date.now();
    const res = await this.write('place order', (t) =>
      this.raw.placeOrder(t, this.opts.account, withStops(open, then)),
    );
    if (!res.ok) return res.outcome;
    return settleByCode(this.book, req.tag, req.type === 'market', sentAt);
  }

  async closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    if (volume !== undefined && (!volume.isFinite() || volume.lte(0)))
      return denied('invalid_volume', 'volume to close must be positive');
    let ref: DxAccountRef;
    try {
      ref = await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    return closeOpen(this.deps(), positionId, volume, ref.hedging, (s) => this.lotOf(s));
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
    return setProtection(this.deps(), positionId, change);
  }

  async cancelOrder(orderId: string): Promise<OrderOutcome> {
    try {
      await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    return cancelPending(this.deps(), orderId);
  }

  async modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    let ref: DxAccountRef;
    try {
      ref = await this.ensureReady();
    } catch (err) {
      return notSent(err);
    }
    return changePending(this.deps(), orderId, change, ref.hedging, (s) => this.lotOf(s));
  }

  // ---- events -------------------------------------------------------------------------------------

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    if (!this.watcher) {
      this.watcher = new PollingWatcher({
        snapshot: () => this.book.snapshot(),
        finalOrder: async (o) =>
          (await this.book.history({ from: new Date(Date.parse(o.createdAt) - 1000) })).find((h) => h.order.id === o.id)
            ?.order ?? null,
        intervalMs: this.opts.pollIntervalMs ?? 1000,
      });
    }
    return this.watcher.add(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.stop();
    this.watcher = null;
    await this.session.close();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private deps() {
    return { book: this.book, raw: this.raw, account: this.opts.account, write: this.write.bind(this) };
  }

  /** Units per lot of a symbol (the instrument's lotSize); 1 for a symbol the instrument list did not name. */
  private lotOf(symbol: string): Decimal {
    return this.lotSizes.get(symbol) ?? ONE;
  }

  private ensureReady(): Promise<DxAccountRef> {
    if (!this.ready) {
      this.ready = this.read(
        'user',
        (t) => this.raw.user(t, `${this.opts.username}@${this.opts.domain}`),
        parseUser,
        true,
      ).then(async (accounts) => {
        const mine = accounts.find((a) => a.account === this.opts.account);
        if (!mine) throw new AppError('not_found', `DXtrade user has no account ${this.opts.account}`);
        // Every instrument's lotSize, once: quantities on the wire are units, volumes at the port are lots.
        const sizes = await this.read(
          'instruments',
          (t) => this.raw.instruments(t),
          (b) =>
            listOf(b, 'instruments').map((i) => [String(i.symbol), new Decimal(String(i.lotSize ?? '1'))] as const),
          true,
        );
        this.lotSizes = new Map(sizes);
        this.ref = mine;
        return mine;
      });
      // A failed start must not stick: the next call tries again.
      this.ready.catch(() => (this.ready = null));
    }
    return this.ready;
  }

  /** Reads may be repeated: one new login and one retry on 401; everything else maps to an AppError. */
  private async read<T>(
    what: string,
    call: (token: string) => Promise<WireResult>,
    parse: (body: unknown) => T,
    skipReady = false,
  ): Promise<T> {
    if (this.closed) throw new AppError('upstream_unavailable', 'adapter closed');
    if (!skipReady) await this.ensureReady();
    for (let attempt = 0; ; attempt++) {
      const token = await this.session.sessionToken();
      const r = await call(token);
      if (r.kind === 'response' && r.status === 401 && attempt === 0) {
        await this.session.invalidate(token);
        continue;
      }
      if (r.kind === 'response' && r.status >= 200 && r.status < 300) return parse(r.body);
      throw readError(r, `DXtrade ${what}`);
    }
  }

  /** Writes go out once. A 401 still logs in again for the next call, but this write is not repeated. */
  private async write(what: string, call: (token: string) => Promise<WireResult>): Promise<WriteResult> {
    if (this.closed) return { ok: false, outcome: denied('upstream_unavailable', 'adapter closed') };
    let token: string;
    try {
      token = await this.session.sessionToken();
    } catch (err) {
      return { ok: false, outcome: notSent(err) };
    }
    const r = await call(token);
    if (r.kind === 'response' && r.status === 401) await this.session.invalidate(token).catch(() => undefined);
    const failure = writeFailure(r, `DXtrade ${what}`);
    return failure ? { ok: false, outcome: failure } : { ok: true, body: r.kind === 'response' ? r.body : null };
  }
}
