import { AppError } from '../../domain/errors.js';
import { type Decimal, dec } from '../../domain/decimal.js';
import { passWriteGate } from '../../domain/write-gate.js';
import type { AccountInfo, Deal, InstrumentSpec, Order, Position, Quote } from '../../domain/types.js';
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
import { fromWireDeal, fromWireOrder, fromWirePosition } from '../../protocols/bridge/convert.js';
import type { CommandMsg, SnapshotMsg, SymbolMsg } from '../../protocols/bridge/schemas.js';
import { bridgeCapabilities } from './capabilities.js';
import { EventDeriver } from './events.js';
import type { BridgeLink, NoReply, Reply } from './link.js';
import { outcomeOf } from './outcome.js';

export interface BridgeAdapterOptions {
  link: BridgeLink;
  /** A write's answer later than this is unresolved. */
  timeoutMs: number;
  /** A read's answer later than this fails with upstream_unavailable. */
  readTimeoutMs?: number;
  /** How far back findByTag looks in the terminal's history. */
  tagLookbackMs?: number;
  /** An EA without a heartbeat for this long is gone: its account reads fail at once as a connection down. */
  silentAfterMs?: number;
}

/** Three heartbeats of the default 10 s missed. */
export const SILENT_AFTER_MS = 30_000;

const d = (v: Decimal | null | undefined): string | null => (v === null || v === undefined ? null : v.toFixed());
let commandSeq = 0;
/** A command id of ours for writes that carry no tag (closes, changes, cancels): unique per process run. */
const commandId = () => `c${Date.now().toString(36)}${(++commandSeq).toString(36)}`;

/**
 * Platform A through the self-hosted terminal bridge: the port over one account's link to the EA in the user's
 * terminal (docs/bridge-protocol.md). Writes are commands answered by acks, reads are snapshots and symbol
 * requests, events come from OnTradeTransaction. An open's command id is its tag, so the EA never executes the
 * same open twice.
 */
export class BridgeAdapter implements BrokerAdapter {
  private readonly readTimeoutMs: number;
  private readonly specs = new Map<string, { at: number; spec: InstrumentSpec | null }>();

  constructor(private readonly o: BridgeAdapterOptions) {
    this.readTimeoutMs = o.readTimeoutMs ?? Math.max(o.timeoutMs, 5_000);
  }

  get capabilities(): Capabilities {
    return bridgeCapabilities(this.o.link.hello?.marginMode !== 'netting');
  }

  /**
   * From the EA's heartbeat while it beats (balance and equity at most one heartbeat old, no round trip); from a
   * snapshot before its first heartbeat. A silent EA fails at once with `connectionDown`, so health marks the
   * account disconnected without waiting for reads to keep failing.
   */
  async accountInfo(): Promise<AccountInfo> {
    const silentMs = this.o.silentAfterMs ?? SILENT_AFTER_MS;
    const beat = this.o.link.beat(Date.now(), silentMs);
    if (beat === 'silent')
      throw new AppError(
        'upstream_unavailable',
        `the terminal's EA is silent: no heartbeat for ${Math.round(silentMs / 1000)} s`,
        { details: { connectionDown: true } },
      );
    const currency = this.o.link.hello?.currency;
    if (beat !== 'unknown' && currency)
      return {
        balance: dec(beat.balance),
        equity: dec(beat.equity),
        currency,
        brokerAccountNumber: this.o.link.login,
      };
    const s = await this.snapshot(Date.now());
    return {
      balance: dec(s.balance),
      equity: dec(s.equity),
      currency: s.currency,
      brokerAccountNumber: this.o.link.login,
    };
  }

  async instrument(symbol: string): Promise<InstrumentSpec | null> {
    const cached = this.specs.get(symbol);
    if (cached && Date.now() - cached.at < 60_000) return cached.spec;
    const s = await this.symbol(symbol);
    const spec: InstrumentSpec | null = s.found
      ? {
          symbol: s.symbol,
          volumeStep: dec(s.volumeStep ?? '0.01'),
          minVolume: dec(s.volumeMin ?? '0.01'),
          maxVolume: dec(s.volumeMax ?? '100'),
          contractSize: dec(s.contractSize ?? '100000'),
          tickSize: dec(s.tickSize ?? '0.00001'),
        }
      : null;
    this.specs.set(symbol, { at: Date.now(), spec });
    return spec;
  }

  async quote(symbol: string): Promise<Quote | null> {
    const s = await this.symbol(symbol);
    if (!s.found || s.bid === null || s.ask === null) return null;
    return { bid: dec(s.bid), ask: dec(s.ask), time: null };
  }

  async listPositions(): Promise<Position[]> {
    return (await this.snapshot(Date.now())).positions.map(fromWirePosition);
  }

  async listOrders(q: OrderQuery = {}): Promise<Order[]> {
    const s = await this.snapshot(q.includeHistory ? (q.from?.getTime() ?? 0) : Date.now());
    const all = [...s.orders, ...(q.includeHistory ? s.history : [])].map(fromWireOrder);
    return all.filter(
      (o) =>
        (!q.symbol || o.symbol === q.symbol) &&
        (!q.from || Date.parse(o.createdAt) >= q.from.getTime()) &&
        (!q.to || Date.parse(o.createdAt) <= q.to.getTime()),
    );
  }

  async listDeals(since: Date): Promise<Deal[]> {
    const s = await this.snapshot(since.getTime());
    return s.deals
      .filter((x) => x.time >= since.getTime())
      .sort((a, b) => a.time - b.time)
      .map(fromWireDeal);
  }

  placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome> {
    const pending = req.type !== 'market';
    return this.command({
      id: req.tag,
      action: pending ? 'PENDING' : 'DEAL',
      symbol: req.symbol,
      orderType: pending ? `${req.side}_${req.type as 'limit' | 'stop'}` : req.side,
      volume: req.volume.toFixed(),
      price: d(req.price),
      sl: d(req.stopLoss),
      tp: d(req.takeProfit),
      position: null,
      order: null,
      comment: req.tag,
    });
  }

  modifyPosition(positionId: string, change: { stopLoss: Decimal | null; takeProfit: Decimal | null }) {
    return this.command({
      ...blank(),
      action: 'SLTP',
      position: positionId,
      sl: d(change.stopLoss),
      tp: d(change.takeProfit),
    });
  }

  closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome> {
    return this.command({ ...blank(), action: 'DEAL', position: positionId, volume: d(volume) });
  }

  cancelOrder(orderId: string): Promise<OrderOutcome> {
    return this.command({ ...blank(), action: 'REMOVE', order: orderId });
  }

  async modifyOrder(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome> {
    if (change.volume !== undefined)
      return denied('invalid_request', "MetaTrader cannot change a pending order's volume; cancel and place again");
    // TRADE_ACTION_MODIFY sets price and both stops at once: what is not changed is sent as it is now.
    const now = (await this.snapshot(Date.now())).orders.find((o) => o.ticket === orderId);
    return this.command({
      ...blank(),
      action: 'MODIFY',
      order: orderId,
      price: change.price !== undefined ? change.price.toFixed() : (now?.price ?? null),
      sl: change.stopLoss !== undefined ? d(change.stopLoss) : (now?.sl ?? null),
      tp: change.takeProfit !== undefined ? d(change.takeProfit) : (now?.tp ?? null),
    });
  }

  async findByTag(tag: string): Promise<TagLookup> {
    const s = await this.snapshot(Date.now() - (this.o.tagLookbackMs ?? 7 * 86_400_000));
    const pos = s.positions.find((p) => p.comment === tag);
    const order = [...s.orders, ...s.history].find((o) => o.comment === tag);
    if (!pos && !order) return { found: false };
    return {
      found: true,
      ...(pos ? { position: fromWirePosition(pos) } : {}),
      ...(order ? { order: fromWireOrder(order) } : {}),
    };
  }

  subscribe(listener: (ev: BrokerEvent) => void): () => void {
    const deriver = new EventDeriver(listener);
    let baseline = false;
    // A snapshot is applied only when it is as new as the events processed: one read while events it already
    // holds are still on their way (or one older than them) would report a change back and forth.
    const sync = async (tries = 0): Promise<void> => {
      const s = await this.snapshot(Date.now()).catch(() => null);
      if (!s || !this.o.link.connected) return;
      if (s.seq !== this.o.link.processedSeq) {
        if (tries < 20) setTimeout(() => void sync(tries + 1), 10 * (tries + 1)).unref();
        return;
      }
      deriver.reconcile(s, baseline);
      baseline = true;
    };
    const off = this.o.link.listen({ onEvent: (e) => deriver.onEvent(e), onSession: () => void sync() });
    if (this.o.link.connected) void sync();
    return off;
  }

  async close(): Promise<void> {}

  private async command(c: Omit<CommandMsg, 'type'>): Promise<OrderOutcome> {
    const r = await this.o.link.request({ type: 'command', ...c }, this.o.timeoutMs, passWriteGate, this.o.timeoutMs);
    return outcomeOf(r);
  }

  private async snapshot(dealsSince: number): Promise<SnapshotMsg> {
    const r = await this.read({ type: 'snapshot_request', id: commandId(), dealsSince: Math.max(0, dealsSince) });
    if (r.type !== 'snapshot') throw new AppError('upstream_error', `the EA answered a snapshot with ${r.type}`);
    return r;
  }

  private async symbol(symbol: string): Promise<SymbolMsg> {
    const r = await this.read({ type: 'symbol_request', id: commandId(), symbol });
    if (r.type !== 'symbol') throw new AppError('upstream_error', `the EA answered a symbol request with ${r.type}`);
    return r;
  }

  private async read(m: Parameters<BridgeLink['request']>[0]): Promise<Exclude<Reply, { type: 'request_error' }>> {
    const r: Reply | NoReply = await this.o.link.request(m, this.readTimeoutMs, undefined, this.readTimeoutMs);
    if ('none' in r)
      throw new AppError(
        'upstream_unavailable',
        r.none === 'timeout'
          ? 'the terminal bridge EA did not answer in time'
          : 'the terminal bridge EA is not connected',
        { retryable: true },
      );
    if (r.type === 'request_error')
      throw r.code === 'busy'
        ? new AppError('rate_limited', `the terminal is busy: ${r.message}`, {
            retryable: true,
            retryAfter: r.retryAfterSec ?? 1,
          })
        : new AppError('upstream_error', `the terminal could not answer: ${r.message}`);
    return r;
  }
}

function blank(): Omit<CommandMsg, 'type' | 'action'> {
  return {
    id: commandId(),
    symbol: null,
    orderType: null,
    volume: null,
    price: null,
    sl: null,
    tp: null,
    position: null,
    order: null,
    comment: null,
  };
}
