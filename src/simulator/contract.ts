import type { Decimal } from 'decimal.js';
import type { Order, OrderType, Position, Side } from '../domain/types.js';

/**
 * The simulator's published contract: what a client of the simulated broker (the in-process `sim` adapter,
 * demo mode, the protocol front ends) may rely on. Nothing here imports our server code.
 *
 * Contract of the simulated broker: one market and a set of accounts. Protocol front ends (TradeLocker REST,
 * cTrader Open API, MetaApi REST) and the in-process `sim` adapter all sit on this one object, so a trade
 * placed through any protocol is visible through every other.
 */

export interface SimInstrument {
  symbol: string;
  /** Numeric id used by protocols that address instruments by number (TradeLocker tradableInstrumentId, cTrader symbolId). */
  numericId: number;
  description: string;
  volumeStep: Decimal;
  minVolume: Decimal;
  maxVolume: Decimal;
  contractSize: Decimal;
  tickSize: Decimal;
  digits: number;
}

export interface Quote {
  symbol: string;
  bid: Decimal;
  ask: Decimal;
  time: string;
}

export interface SimAccountInit {
  id?: string;
  /** Broker account number shown to the user; generated when omitted. */
  login?: string;
  balance: Decimal.Value;
  currency?: string;
  hedging?: boolean;
  leverage?: number;
  /** Free-form owner data the protocol front ends use (email, password, server, environment). */
  meta?: Record<string, string>;
}

export interface SimAccount {
  id: string;
  login: string;
  currency: string;
  hedging: boolean;
  leverage: number;
  balance: Decimal;
  meta: Record<string, string>;
  createdAt: string;
}

export interface SimAccountState {
  balance: Decimal;
  equity: Decimal;
  margin: Decimal;
  freeMargin: Decimal;
  currency: string;
  unrealizedPnl: Decimal;
}

export interface SimDeal {
  id: string;
  orderId: string;
  positionId: string;
  symbol: string;
  side: 'buy' | 'sell';
  volume: Decimal;
  price: Decimal;
  /** in = opens/increases, out = closes/reduces. */
  entry: 'in' | 'out';
  profit: Decimal;
  time: string;
  tag: string | null;
}

/**
 * Something that happened on a simulated account. The simulator's own type (it knows nothing of our broker
 * port); it has the port's BrokerEvent shape, so the in-process adapter passes it on as is.
 */
export interface SimEvent {
  kind:
    | 'position_opened'
    | 'position_modified'
    | 'position_closed'
    | 'position_reduced'
    | 'order_placed'
    | 'order_modified'
    | 'order_cancelled'
    | 'order_filled';
  position?: Position;
  order?: Order;
  /** Volume closed by a partial close. */
  closedVolume?: Decimal;
  at: string;
}

/** A business rejection of a write (or a read of something unknown); every front end maps `code` to its protocol. */
export class SimError extends Error {
  constructor(
    readonly code: SimErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SimError';
  }
}

export interface SimOrderRequest {
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  /** Limit/stop price; required for pending orders. */
  price?: Decimal | null;
  stopLoss?: Decimal | null;
  takeProfit?: Decimal | null;
  /** The client's correlation tag, kept on the order and position and found by findByTag. */
  tag: string;
  /** Close-by reference for netting or explicit position targeting (not used by hedging opens). */
  positionId?: string;
  /** An EA's magic number and the trader's comment, kept on the order and its position (as MT does). */
  magic?: number;
  comment?: string;
}

export interface SimPlaceOptions {
  /** Fill only part of the volume (ratio 0..1). */
  partialRatio?: number;
  /**
   * A limit order already marketable at placement: 'reject' (default) refuses it as INVALID_PRICE, as MetaTrader
   * does; 'fill' executes it at once at the market price (the limit or better), as TradeLocker servers do.
   */
  marketableLimit?: 'reject' | 'fill';
  /** The order is taken (order_placed) and then cancelled or rejected instead of filled (a dealing desk's refusal). */
  refuseAs?: 'cancelled' | 'rejected';
}

export interface SimWriteResult {
  order: Order;
  position: Position | null;
  deal: SimDeal | null;
}

export type SimErrorCode =
  | 'UNKNOWN_ACCOUNT'
  | 'UNKNOWN_SYMBOL'
  | 'INVALID_VOLUME'
  | 'INVALID_PRICE'
  | 'INVALID_STOPS'
  | 'NOT_ENOUGH_MONEY'
  | 'POSITION_NOT_FOUND'
  | 'ORDER_NOT_FOUND'
  | 'MARKET_CLOSED'
  | 'REJECTED';

export type FaultOp =
  | 'placeOrder'
  | 'modifyPosition'
  | 'closePosition'
  | 'cancelOrder'
  | 'modifyOrder'
  | 'read'
  | 'auth'
  | '*';

export type FaultKind =
  /** The write is applied at the broker, but the answer never arrives (client times out). */
  | 'timeout_after_apply'
  /** Nothing is applied and the answer never arrives. */
  | 'timeout_before_apply'
  /** The broker refuses the write with a business rejection. */
  | 'reject'
  /** The answer arrives late by delayMs (the write still applies). */
  | 'delay'
  /** The connection is reset (nothing applied). */
  | 'reset'
  /** 429 / BLOCKED_PAYLOAD_TYPE with retryAfterSec. */
  | 'rate_limit'
  /** The access token is expired / invalidated; the client must refresh or re-authorise. */
  | 'token_expired'
  | 'token_invalidated'
  /** The streaming connection drops. */
  | 'disconnect'
  /** Fill only part of the volume (ratio 0..1). */
  | 'partial_fill'
  /**
   * placeOrder only: the broker takes the order (it shows under its tag), the answer never arrives (client
   * times out), and the broker then cancels or rejects it (`refuseAs`) instead of filling it.
   */
  | 'cancel_after_timeout';

export interface FaultSpec {
  op: FaultOp;
  kind: FaultKind;
  /** Only for this simulated account; every account when omitted. */
  accountId?: string;
  /** How many operations it hits before it is spent; default 1. */
  times?: number;
  delayMs?: number;
  retryAfterSec?: number;
  message?: string;
  partialRatio?: number;
  /** cancel_after_timeout: the order's final status at the broker (default cancelled). */
  refuseAs?: 'cancelled' | 'rejected';
}

export interface ActiveFault extends FaultSpec {
  id: string;
  remaining: number;
}

export interface FaultInjector {
  inject(spec: FaultSpec): string;
  /** Consumes one hit of the first fault matching op and account, if any. */
  take(op: Exclude<FaultOp, '*'>, accountId: string): ActiveFault | null;
  list(): ActiveFault[];
  remove(id: string): void;
  clear(): void;
}

export interface SimBrokerApi {
  readonly faults: FaultInjector;
  instruments(): SimInstrument[];
  instrument(symbolOrId: string | number): SimInstrument | null;
  quote(symbol: string): Quote;
  /** Test hook: move the mid price (pending orders, SL and TP trigger on it). */
  setPrice(symbol: string, mid: Decimal.Value): void;
  createAccount(init: SimAccountInit): SimAccount;
  account(id: string): SimAccount | null;
  accounts(): SimAccount[];
  state(accountId: string): SimAccountState;
  positions(accountId: string): Position[];
  positionById(accountId: string, positionId: string): Position | null;
  /** Pending orders, plus final ones when includeHistory. Filters by creation time and symbol. */
  orders(accountId: string, q?: { includeHistory?: boolean; from?: Date; to?: Date; symbol?: string }): Order[];
  deals(accountId: string, q?: { from?: Date; to?: Date }): SimDeal[];
  /** One order, pending or final, by id: an index lookup, not a scan of the account's history. */
  order(accountId: string, orderId: string): Order | undefined;
  /** The deals of one position or one order, oldest first: an index lookup, not a scan. */
  dealsOf(accountId: string, of: { positionId: string } | { orderId: string }): SimDeal[];
  /** Throws SimError on a business rejection. */
  placeOrder(accountId: string, req: SimOrderRequest, opts?: SimPlaceOptions): SimWriteResult;
  modifyPosition(
    accountId: string,
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Position;
  closePosition(accountId: string, positionId: string, volume?: Decimal): SimWriteResult;
  modifyOrder(
    accountId: string,
    orderId: string,
    change: { price?: Decimal; volume?: Decimal; stopLoss?: Decimal | null; takeProfit?: Decimal | null },
  ): Order;
  cancelOrder(accountId: string, orderId: string): Order;
  findByTag(accountId: string, tag: string): { position?: Position; order?: Order };
  /** Every state change of an account, in order. */
  onEvent(listener: (accountId: string, ev: SimEvent) => void): () => void;
  /** Starts the price feed (random walk) every intervalMs; stop() ends it. */
  start(intervalMs?: number): void;
  stop(): void;
  /** Whole state as JSON so demo mode keeps the simulated broker across restarts. */
  snapshot(): unknown;
}
