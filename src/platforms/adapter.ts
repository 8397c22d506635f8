import type { Decimal } from 'decimal.js';
import type { Capabilities } from '../domain/capabilities.js';
import type {
  AccountInfo,
  Deal,
  InstrumentSpec,
  Order,
  OrderType,
  Platform,
  Position,
  Quote,
  Side,
} from '../domain/types.js';

/**
 * The port every broker platform implements. The engine and the API know only this file, never a concrete
 * platform. Reads throw AppError (mapped per platform in its errors.ts); writes never throw for a broker
 * answer: they return an OrderOutcome so the caller must handle the unknown case explicitly.
 */

/** What an account can do belongs to the domain (the planner and copy rules read it); re-exported for adapters. */
export type { Capabilities } from '../domain/capabilities.js';

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
  /**
   * Set by the adapter when the broker refused the write for now and says to send it again (a 429, a request
   * frequency limit): nothing was applied. `afterSec` is the broker's hint (Retry-After, MetaApi's
   * recommendedRetryTime, cTrader's retryAfter), null when it gave none. The engine retries such a refusal until
   * the copy rule's max delay has passed (engine/rate-limit.ts).
   */
  retry?: RetryHint;
}

export interface RetryHint {
  afterSec: number | null;
}

/** Never sent: refused before it left us (capabilities, validation, risk). */
export interface DeniedOutcome {
  kind: 'denied';
  code: string;
  message: string;
  /** Not sent for now, to be sent again (our own pacer withdrew it): as RejectedOutcome.retry. */
  retry?: RetryHint;
}

/** Sent, answer unknown (timeout, reset). Settle by looking the tag up; never retry blind. */
export interface UnresolvedOutcome {
  kind: 'unresolved';
  code: string;
  message: string;
}

export type OrderOutcome = ConfirmedOutcome | RejectedOutcome | DeniedOutcome | UnresolvedOutcome;

/** The outcome constructors every adapter (and the engine's own verdicts) use, so an outcome has one shape. */
export function confirmed(o: Partial<Omit<ConfirmedOutcome, 'kind'>> = {}): ConfirmedOutcome {
  return {
    kind: 'confirmed',
    brokerOrderId: null,
    positionId: null,
    filledVolume: null,
    fillPrice: null,
    brokerTime: null,
    ...o,
  };
}
export function rejected(code: string, message: string, raw?: unknown, retry?: RetryHint): RejectedOutcome {
  const o: RejectedOutcome =
    raw === undefined ? { kind: 'rejected', code, message } : { kind: 'rejected', code, message, raw };
  if (retry) o.retry = retry;
  return o;
}

/** A refusal the broker says to retry (see RejectedOutcome.retry), with its hint in seconds when it gave one. */
export function retryLater(afterSec: number | null | undefined): RetryHint {
  return { afterSec: typeof afterSec === 'number' && Number.isFinite(afterSec) && afterSec >= 0 ? afterSec : null };
}
/**
 * A REST platform's 4xx answer to a write, as the outcome: refused, with the HTTP status, the body and the broker's
 * Retry-After kept raw; a 429 is the one refusal such a broker asks us to repeat (nothing was applied).
 */
export function httpRefusal(
  err: { code: string; message: string; retryAfter?: number | undefined },
  r: { status: number; body: unknown },
): RejectedOutcome {
  return rejected(
    err.code,
    err.message,
    {
      status: r.status,
      body: r.body,
      ...(err.retryAfter !== undefined ? { retryAfterSec: err.retryAfter } : {}),
    },
    r.status === 429 ? retryLater(err.retryAfter) : undefined,
  );
}
export function denied(code: string, message: string): DeniedOutcome {
  return { kind: 'denied', code, message };
}
export function unresolved(code: string, message: string): UnresolvedOutcome {
  return { kind: 'unresolved', code, message };
}

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
  /** Volume closed by a partial close, when known. */
  closedVolume?: Decimal;
  at: string;
}

export interface BrokerAdapter {
  readonly capabilities: Capabilities;
  /**
   * Balance, equity, currency. `signal` (health reads): aborted, a self-paced adapter withdraws the requests still
   * waiting in its own queue (not sent, AppError `rate_limited`) instead of sending them after its caller gave up.
   */
  accountInfo(signal?: AbortSignal): Promise<AccountInfo>;
  instrument(symbol: string): Promise<InstrumentSpec | null>;
  /**
   * The names of the symbols the account may trade, as the broker lists them (cTrader symbol list, TradeLocker
   * instruments, MetaApi symbols). The connection test reads it, so an account whose broker lists nothing is seen
   * before it copies. Optional: a platform without such a list (the terminal bridge) leaves it out.
   */
  listSymbols?(): Promise<string[]>;
  /** The symbol of the broker's own instrument id (TradeLocker `tradableInstrumentId`), where the broker has one. */
  symbolOfInstrumentId?(instrumentId: string): Promise<string | null>;
  /** Current bid/ask of a symbol, or null when the broker does not list it; present where `has.quotes`. */
  quote?(symbol: string): Promise<Quote | null>;
  listPositions(): Promise<Position[]>;
  /**
   * Order writes per second this connection's own pacer lets through now (TradeLocker: from the limits the
   * broker served); absent or null = `capabilities.rateLimitPerSecond`. Admission control plans with it.
   */
  writeRatePerSecond?(): number | null;
  listOrders(query?: OrderQuery): Promise<Order[]>;
  placeOrder(req: PlaceOrderRequest): Promise<OrderOutcome>;
  modifyPosition(
    positionId: string,
    change: { stopLoss: Decimal | null; takeProfit: Decimal | null },
  ): Promise<OrderOutcome>;
  /** Close `volume` of the position, or all of it when volume is omitted. */
  closePosition(positionId: string, volume?: Decimal): Promise<OrderOutcome>;
  cancelOrder(orderId: string): Promise<OrderOutcome>;
  /** Change a pending order; present only where `capabilities.has.modifyPendingOrder` is not false. */
  modifyOrder?(orderId: string, change: ModifyOrderChange): Promise<OrderOutcome>;
  /** Settles an unresolved write: is there a position or order carrying this tag? */
  findByTag(tag: string): Promise<TagLookup>;
  /**
   * Every tag on the account's positions, pending orders and the history since `since`, each answered as
   * `findByTag` would: settles many unresolved writes of one account with one read (see tag-index.ts).
   * Optional: without it, the engine asks `findByTag` once per tag.
   */
  tagIndex?(since: Date): Promise<ReadonlyMap<string, TagLookup>>;
  /**
   * The account's deals executed at or after `since`, oldest first, read from the broker's own history (cTrader
   * deal list, TradeLocker executions, MetaApi history deals). A Master's watch replays these after any gap (a
   * start, a failover, a stream reconnect), so a trade opened and closed while nobody watched still gets its
   * ledger rows. Every real platform has it; the conformance suite checks it against the simulator's books.
   */
  listDeals?(since: Date): Promise<Deal[]>;
  /** Subscribe to the account's broker events (streaming or polled by the adapter). Returns unsubscribe. */
  subscribe?(listener: (ev: BrokerEvent) => void): () => void;
  close(): Promise<void>;
}

/** Builds an adapter for one stored account; main.ts registers one factory per platform. */
export interface AdapterFactory {
  platform: Platform;
  capabilities: Capabilities;
  create(account: {
    id: string;
    brokerAccountId: string;
    environment: string | null;
    credentials: Record<string, unknown> | null;
  }): Promise<BrokerAdapter>;
}
