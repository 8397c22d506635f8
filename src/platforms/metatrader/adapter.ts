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
import { metaTraderCapabilities, type MtPlatform } from './capabilities.js';
import { fitComment } from './comment.js';
import { tradeResultFailure } from './errors.js';
import type { MetaTraderGateway, MtTradeRequest } from './gateway.js';
import { type MtDeal, type MtTradeResult, toDeals } from './parse.js';
import { PollingWatcher } from '../polling-watcher.js';
import { type MtStreamOptions, openMetaApiStream } from './stream-client.js';
import { type MtStreamState, StreamingWatcher } from './stream-watcher.js';
import { confirmed, denied, rejected } from '../adapter.js';
import { indexTags } from '../tag-index.js';

export interface MetaTraderAdapterOptions {
  gateway: MetaTraderGateway;
  platform: MtPlatform;
  /** Known from provisioning; confirmed (or corrected) from account-information on connect(). */
  hedging?: boolean;
  /** Decoration sent in the MT comment when the tag leaves room for it (26-character rule). */
  comment?: string;
  /** Magic number stamped on our trades (MetaApi's account default applies when omitted). */
  magic?: number;
  /** Poll period of subscribe() (while the stream is down, when there is one). */
  pollIntervalMs?: number;
  /** MetaApi's streaming API for subscribe(); without it, subscribe() polls REST. */
  stream?: MtStreamOptions;
  /** Told when Master events move between the stream and REST polling (degraded), with the reason. */
  onStreamState?: (state: MtStreamState) => void;
  /** How far back findByTag and listOrders({includeHistory}) look when no window is given. */
  historyLookbackMs?: number;
}

/** The window around a write in which its deal is looked for; covers clock skew between us and the broker. */
const SETTLE_WINDOW_MS = 5 * 60_000;
const MIN_POLL_MS = 250;
const DEFAULT_LOOKBACK_MS = 30 * 24 * 3600_000;

const PLACE_ACTION = {
  'buy:market': 'ORDER_TYPE_BUY',
  'sell:market': 'ORDER_TYPE_SELL',
  'buy:limit': 'ORDER_TYPE_BUY_LIMIT',
  'sell:limit': 'ORDER_TYPE_SELL_LIMIT',
  'buy:stop': 'ORDER_TYPE_BUY_STOP',
  'sell:stop': 'ORDER_TYPE_SELL_STOP',
} as const;

/** MetaApi's trade model takes JSON numbers; toFixed() keeps the decimal's own digits. */
const num = (d: Decimal) => Number(d.toFixed());

/**
 * BrokerAdapter for MetaTrader 4/5 accounts: build the MetatraderTrade, send it once through the gateway,
 * classify the answer. `clientId` carries our correlation tag; an unknown outcome (-11, timeout, reset) is
 * `unresolved` and is settled by findByTag over positions, pending orders and history, never by a resend.
 */
export class MetaTraderAdapter implements BrokerAdapter {
  private caps: Capabilities;
  private platform: MtPlatform;
  private readonly gateway: MetaTraderGateway;
  private readonly specs = new Map<string, InstrumentSpec | null>();
  private watcher: PollingWatcher | StreamingWatcher | null = null;
  private closed = false;

  constructor(private readonly opts: MetaTraderAdapterOptions) {
    this.gateway = opts.gateway;
    this.platform = opts.platform;
    this.caps = this.capsFor(opts.platform, opts.hedging ?? true);
  }

  get capabilities(): Capabilities {
    return this.caps;
  }

  /** Reads account information once, so a wrong account or a dead connection shows now, and netting is known. */
  async connect(): Promise<void> {
    const info = await this.gateway.accountInformation();
    this.platform = info.platform;
    this.caps = this.capsFor(info.platform, info.hedging);
  }

  /** True while subscribe()'s events come from a synchronized stream rather than from polls (tests, health). */
  get streaming(): boolean {
    return this.watcher instanceof StreamingWatcher && this.watcher.streaming;
  }

  /** Why Master events come from REST polls although a stream is configured; null while streaming. */
  get streamDegradedReason(): string | null {
    return this.watcher instanceof StreamingWatcher ? this.watcher.degradedReason : null;
  }

  // ---- reads --------------------------------------------------------------------------------------

  async accountInfo(): Promise<AccountInfo> {
    this.open();
    const info = await this.gateway.accountInformation();
    return {
      balance: info.balance,
      equity: info.equity,
      currency: info.currency,
      brokerAccountNumber: info.login,
      // An investor (read-only) password connects too, and can never trade.
      tradingAllowed: info.tradeAllowed && !info.investorMode,
    };
  }

  async instrument(symbol: string): Promise<InstrumentSpec | null> {
    this.open();
    if (this.specs.has(symbol)) return this.specs.get(symbol)!;
    const spec = await this.gateway.symbolSpecification(symbol);
    this.specs.set(symbol, spec);
    return spec;
  }

  listSymbols(): Promise<string[]> {
    this.open();
    return this.gateway.symbols();
  }

  listPositions(): Promise<Position[]> {
    this.open();
    return this.gateway.positions();
  }

  async listOrders(query: OrderQuery = {}): Promise<Order[]> {
    this.open();
    const from = query.from?.getTime() ?? -Infinity;
    const to = query.to?.getTime() ?? Infinity;
    const keep = (o: Order) =>
      (!query.symbol || o.symbol === query.symbol) && Date.parse(o.createdAt) >= from && Date.parse(o.createdAt) <= to;
    const pending = (await this.gateway.orders()).filter(keep);
    if (!query.includeHistory) return pending;
    const { start, end } = this.window(query.from, query.to);
    const history = (await this.gateway.historyOrders(start, end)).filter(keep);
    return [...pending, ...history];
  }

  async findByTag(tag: string): Promise<TagLookup> {
    this.open();
    const position = (await this.gateway.positions()).find((p) => p.tag === tag);
    if (position) return { found: true, position };
    const order = (await this.gateway.orders()).find((o) => o.tag === tag);
    if (order) return { found: true, order };
    // A filled or cancelled order still proves the write reached the broker; the newest match wins.
    const { start, end } = this.window();
    const hits = (await this.gateway.historyOrders(start, end)).filter((o) => o.tag === tag);
    const last = hits.sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt)).at(-1);
    return last ? { found: true, order: last } : { found: false };
  }

  async tagIndex(since: Date): Promise<ReadonlyMap<string, TagLookup>> {
    this.open();
    const positions = await this.gateway.positions();
    const orders = await this.gateway.orders();
    const { start, end } = this.window(since);
    const history = (await this.gateway.historyOrders(start, end)).sort(
      (a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt),
    );
    return indexTags(positions, orders, history);
  }

  /**
   * MetaApi history deals done in [since, a minute ahead), trade deals only, oldest first (see toDeals for the
   * entry mapping). A netting reversal (DEAL_ENTRY_INOUT) is split by the volume its position held, so when the
   * window holds one, the lookback before `since` is read too: the position may have been opened before it.
   */
  async listDeals(since: Date): Promise<Deal[]> {
    this.open();
    const { start, end } = this.window(since);
    const rows = await this.gateway.historyDeals(start, end);
    if (!rows.some((d) => d.entry === 'inout' && d.side !== null)) return toDeals(rows);
    const lookback = this.opts.historyLookbackMs ?? DEFAULT_LOOKBACK_MS;
    const earlier = await this.gateway.historyDeals(new Date(start.getTime() - lookback), start);
    return toDeals(rows, earlier);
  }

  // ---- writes -------------------------------------------------------------------------------------

  async placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    if (this.closed) return denied('upstream_unavailable', 'adapter closed');
    const fit = fitComment(req.tag, this.opts.comment);
    if (!fit.ok) return denied('tag_invalid', fit.reason);
    if (!req.volume.isFinite() || req.volume.lte(0)) return denied('invalid_volume', 'volume must be positive');
    if (req.type !== 'market' && (!req.price || req.price.lte(0)))
      return denied('price_required', `a ${req.type} order needs a price`);
    const body: MtTradeRequest = {
      actionType: PLACE_ACTION[`${req.side}:${req.type}`],
      symbol: req.symbol,
      volume: num(req.volume),
      clientId: fit.clientId,
      ...(fit.comment ? { comment: fit.comment } : {}),
      ...(this.opts.magic !== undefined ? { magic: this.opts.magic } : {}),
    };
    if (req.type !== 'market') body.openPrice = num(req.price!);
    if (req.stopLoss) body.stopLoss = num(req.stopLoss);
    if (req.takeProfit) body.takeProfit = num(req.takeProfit);
    const sentAt = Date.now();
    const res = await this.send(body, 'place order');
    if (!res.ok) return res.outcome;
    if (req.type !== 'market') {
      return confirmed({ brokerOrderId: res.result.orderId, brokerTime: new Date().toISOString(), raw: res.result });
    }
    return this.withFill(res.result, sentAt, null);
  }

  async modifyPosition(
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<OrderOutcome> {
    if (this.closed) return denied('upstream_unavailable', 'adapter closed');
    // 0 is MT's "no stop": sending both levels makes null remove one, as the port asks.
    const res = await this.send(
      {
        actionType: 'POSITION_MODIFY',
        positionId,
        stopLoss: change.stopLoss ? num(change.stopLoss) : 0,
        takeProfit: change.takeProfit ? num(change.takeProfit) : 0,
      },
      'modify position',
    );
    if (!res.ok) return res.outcome;
    return confirmed({ positionId, brokerTime: new Date().toISOString(), raw: res.result });
  }

  async closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    if (this.closed) return denied('upstream_unavailable', 'adapter closed');
    if (volume !== undefined && (!volume.isFinite() || volume.lte(0)))
      return denied('invalid_volume', 'volume to close must be positive');
    const body: MtTradeRequest = volume
      ? { actionType: 'POSITION_PARTIAL', positionId, volume: num(volume) }
      : { actionType: 'POSITION_CLOSE_ID', positionId };
    const sentAt = Date.now();
    const res = await this.send(body, volume ? 'partial close' : 'close position');
    if (!res.ok) return res.outcome;
    return this.withFill(res.result, sentAt, positionId);
  }

  async cancelOrder(orderId: string): Promise<OrderOutcome> {
    if (this.closed) return denied('upstream_unavailable', 'adapter closed');
    const res = await this.send({ actionType: 'ORDER_CANCEL', orderId }, 'cancel order');
    if (!res.ok) return res.outcome;
    return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.result });
  }

  async modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    if (this.closed) return denied('upstream_unavailable', 'adapter closed');
    if (change.volume !== undefined)
      return denied(
        'unsupported',
        'MetaTrader cannot change the volume of a pending order; cancel and place a new one',
      );
    let price = change.price;
    if (!price) {
      // ORDER_MODIFY requires openPrice even when only SL/TP change.
      let current: Order | undefined;
      try {
        current = (await this.gateway.orders()).find((o) => o.id === orderId);
      } catch (err) {
        return denied(err instanceof AppError ? err.code : 'internal_error', `not sent: ${(err as Error).message}`);
      }
      if (!current?.price) return rejected('not_found', `no pending order ${orderId}`);
      price = current.price;
    }
    const body: MtTradeRequest = { actionType: 'ORDER_MODIFY', orderId, openPrice: num(price) };
    if (change.stopLoss !== undefined) body.stopLoss = change.stopLoss ? num(change.stopLoss) : 0;
    if (change.takeProfit !== undefined) body.takeProfit = change.takeProfit ? num(change.takeProfit) : 0;
    const res = await this.send(body, 'modify order');
    if (!res.ok) return res.outcome;
    return confirmed({ brokerOrderId: orderId, brokerTime: new Date().toISOString(), raw: res.result });
  }

  // ---- events -------------------------------------------------------------------------------------

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    if (!this.watcher) {
      const reads = {
        snapshot: async () => {
          const [positions, orders] = await Promise.all([this.gateway.positions(), this.gateway.orders()]);
          return { positions, orders };
        },
        finalOrder: async (o: Order) => {
          const from = new Date(Date.parse(o.createdAt) - 1000);
          return (
            (await this.gateway.historyOrders(from, new Date(Date.now() + 60_000))).find((h) => h.id === o.id) ?? null
          );
        },
      };
      const pollMs = Math.max(MIN_POLL_MS, this.opts.pollIntervalMs ?? 1000);
      const stream = this.opts.stream;
      this.watcher = stream
        ? new StreamingWatcher({
            ...reads,
            open: (events) => openMetaApiStream(stream, events),
            pollIntervalMs: pollMs,
            ...(this.opts.onStreamState ? { onState: this.opts.onStreamState } : {}),
          })
        : new PollingWatcher({ ...reads, intervalMs: pollMs });
    }
    const off = this.watcher.add(listener);
    return () => {
      off();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.stop();
    this.watcher = null;
    await this.gateway.close();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private capsFor(platform: MtPlatform, hedging: boolean): Capabilities {
    return metaTraderCapabilities({ platform, hedging, streaming: this.opts.stream !== undefined });
  }

  private open(): void {
    if (this.closed) throw new AppError('upstream_unavailable', 'adapter closed');
  }

  private window(from?: Date, to?: Date): { start: Date; end: Date } {
    const now = Date.now();
    return {
      start: from ?? new Date(now - (this.opts.historyLookbackMs ?? DEFAULT_LOOKBACK_MS)),
      // End is exclusive at MetaApi; a minute ahead covers our clock running behind the broker's.
      end: to ? new Date(to.getTime() + 1) : new Date(now + 60_000),
    };
  }

  private async send(
    body: MtTradeRequest,
    what: string,
  ): Promise<{ ok: true; result: MtTradeResult } | { ok: false; outcome: OrderOutcome }> {
    const answer = await this.gateway.trade(body);
    if (answer.kind === 'failed') return { ok: false, outcome: answer.outcome };
    const failure = tradeResultFailure(answer.result, this.platform, `MetaTrader ${what}`);
    return failure ? { ok: false, outcome: failure } : { ok: true, result: answer.result };
  }

  /**
   * The trade answer names the order but not the fill; its deals give volume and price. A failed lookup leaves
   * those null: the write is confirmed by the broker's code either way.
   */
  private async withFill(result: MtTradeResult, sentAt: number, positionId: string | null): Promise<OrderOutcome> {
    let deals: MtDeal[] = [];
    if (result.orderId) {
      try {
        const all = await this.gateway.historyDeals(new Date(sentAt - SETTLE_WINDOW_MS), new Date(Date.now() + 60_000));
        deals = all.filter((d) => d.orderId === result.orderId && d.volume !== null && d.price !== null);
      } catch {
        deals = [];
      }
    }
    const volume = deals.reduce((s, d) => s.plus(d.volume!), new Decimal(0));
    const price = volume.isZero()
      ? null
      : deals.reduce((s, d) => s.plus(d.price!.mul(d.volume!)), new Decimal(0)).div(volume);
    const last = deals.at(-1);
    return confirmed({
      brokerOrderId: result.orderId,
      positionId: result.positionId ?? last?.positionId ?? positionId,
      filledVolume: volume.isZero() ? null : volume,
      fillPrice: price,
      brokerTime: last?.time ?? new Date().toISOString(),
      raw: result,
    });
  }
}
