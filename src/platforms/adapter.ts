import type { Decimal } from 'decimal.js';
import type { AccountInfo, InstrumentSpec, Order, OrderType, Platform, Position, Quote, Side } from '../domain/types.js';

/**
 * The port every broker platform implements. The engine and the API know only this file, never a concrete
 * platform. Reads throw AppError (mapped per platform in its errors.ts); writes never throw for a broker
 * answer: they return an OrderOutcome so the caller must handle the unknown case explicitly.
 */

/** ccxt-style capability flags: true, false, or emulated by the adapter on top of simpler calls. */
export type Support = boolean | 'emulated';

export interface Capabilities {
  platform: Platform;
  /** Several positions per symbol (hedging) or one net position (netting). */
  hedging: boolean;
  orderTypes: OrderType[];
  has: {
    marketOrders: Support;
    pendingOrders: Support;
    modifyPendingOrder: Support;
    cancelPendingOrder: Support;
    modifyPositionSlTp: Support;
    partialClose: Support;
    closeAll: Support;
    stopLossOnOpen: Support;
    takeProfitOnOpen: Support;
    lookupByTag: Support;
    /** The broker pushes execution events (else the watcher polls and diffs snapshots). */
    streamingEvents: Support;
    orderHistory: Support;
    /** quote() gives the current bid/ask (the slippage guard needs it); absent = false. */
    quotes?: Support;
  };
  /** Where the correlation tag travels and how long it may be. */
  correlationTag: { field: string; maxLength: number };
  /** Requests per second this adapter allows itself per broker connection (below the platform's limit). */
  rateLimitPerSecond: number;
  /**
   * The adapter paces its own calls by what the broker serves (TradeLocker's /trade/config limits, cTrader's
   * per-connection window): callers must not add a second, blunter limit on top.
   */
  selfPaced?: boolean;
  volumeUnit: 'lots' | 'units';
}

export interface PlaceOrderRequest {
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  /** Limit/stop price; required for pending orders. */
  price?: Decimal | null;
  stopLoss?: Decimal | null;
  takeProfit?: Decimal | null;
  /** Deterministic correlation tag; the adapter puts it where the platform keeps it. */
  tag: string;
}

export interface ConfirmedOutcome {
  kind: 'confirmed';
  brokerOrderId: string | null;
  positionId: string | null;
  /** Filled volume (may be less than asked on a partial fill). */
  filledVolume: Decimal | null;
  fillPrice: Decimal | null;
  brokerTime: string | null;
  raw?: unknown;
}

export interface RejectedOutcome {
  kind: 'rejected';
  code: string;
  message: string;
  raw?: unknown;
}

/** Never sent: refused before it left us (capabilities, validation, risk). */
export interface DeniedOutcome {
  kind: 'denied';
  code: string;
  message: string;
}

/** Sent, answer unknown (timeout, reset). Settle by looking the tag up; never retry blind. */
export interface UnresolvedOutcome {
  kind: 'unresolved';
  code: string;
  message: string;
}

export type OrderOutcome = ConfirmedOutcome | RejectedOutcome | DeniedOutcome | UnresolvedOutcome;
export type OutcomeKind = OrderOutcome['kind'];

/** Fields of a pending order to change; omitted fields stay as they are, null removes SL/TP. */
export interface ModifyOrderChange {
  price?: Decimal;
  volume?: Decimal;
  stopLoss?: Decimal | null;
  takeProfit?: Decimal | null;
}

export interface OrderQuery {
  from?: Date;
  to?: Date;
  symbol?: string;
  /** Include final (filled/cancelled) orders from history as well as pending ones. */
  includeHistory?: boolean;
}

export interface TagLookup {
  found: boolean;
  position?: Position;
  order?: Order;
}

/** Something that happened on the account at the broker; the watcher turns these into copy actions. */
export interface BrokerEvent {
  kind: 'position_opened' | 'position_modified' | 'position_closed' | 'position_reduced' | 'order_placed' | 'order_modified' | 'order_cancelled' | 'order_filled';
  position?: Position;
  order?: Order;
  /** Volume closed by a partial close, when known. */
  closedVolume?: Decimal;
  at: string;
}

export interface BrokerAdapter {
  readonly capabilities: Capabilities;
  accountInfo(): Promise<AccountInfo>;
  instrument(symbol: string): Promise<InstrumentSpec | null>;
  /** The symbol of the broker's own instrument id (TradeLocker `tradableInstrumentId`), where the broker has one. */
  symbolOfInstrumentId?(instrumentId: string): Promise<string | null>;
  /** Current bid/ask of a symbol, or null when the broker does not list it; present where `has.quotes`. */
  quote?(symbol: string): Promise<Quote | null>;
  listPositions(): Promise<Position[]>;
  listOrders(query?: OrderQuery): Promise<Order[]>;
  placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome>;
  modifyPosition(positionId: string, change: { stopLoss: Decimal | null; takeProfit: Decimal | null }): Promise<OrderOutcome>;
  /** Close `volume` of the position, or all of it when volume is omitted. */
  closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome>;
  cancelOrder(orderId: string): Promise<OrderOutcome>;
  /** Change a pending order; present only where `capabilities.has.modifyPendingOrder` is not false. */
  modifyOrder?(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome>;
  /** Settles an unresolved write: is there a position or order carrying this tag? */
  findByTag(tag: string): Promise<TagLookup>;
  /** Subscribe to the account's broker events (streaming or polled by the adapter). Returns unsubscribe. */
  subscribe?(listener: (ev: BrokerEvent) => void): () => void;
  close(): Promise<void>;
}

/** Builds an adapter for one stored account; main.ts registers one factory per platform. */
export interface AdapterFactory {
  platform: Platform;
  capabilities: Capabilities;
  create(account: { id: string; brokerAccountId: string; environment: string | null; credentials: Record<string, unknown> | null }): Promise<BrokerAdapter>;
}
