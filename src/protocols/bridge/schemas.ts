import { Type, type Static, type TSchema } from 'typebox';

/**
 * The terminal bridge protocol, version 1 (docs/bridge-protocol.md): one JSON Schema per message, in both
 * directions. The schemas are strict (`additionalProperties: false`): a message that fails its schema closes the
 * connection with a protocol error before anything is written, so an EA of another version cannot be half
 * understood. Prices and volumes travel as decimal strings (MQL's DoubleToString with the symbol's digits), so no
 * binary float reaches a ledger. docs/bridge-protocol/schemas/*.json are these, generated (see schemas.test.ts).
 */
export const PROTOCOL_VERSION = 1;

const strict = { additionalProperties: false } as const;
const Decimal = Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', maxLength: 40 });
const NullableDecimal = Type.Union([Decimal, Type.Null()]);
/** MT5 tickets are ulong: decimal digits, carried as strings (JSON numbers lose precision past 2^53). */
const Ticket = Type.String({ pattern: '^[0-9]{1,20}$' });
const NullableTicket = Type.Union([Ticket, Type.Null()]);
const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' });
const Time = Type.Integer({ minimum: 0, description: 'epoch milliseconds (server time of the trade server)' });
const SymbolName = Type.String({ minLength: 1, maxLength: 32 });
const Side = Type.Union([Type.Literal('buy'), Type.Literal('sell')]);
const Comment = Type.Union([Type.String({ maxLength: 31 }), Type.Null()]);

export const WirePosition = Type.Object(
  {
    ticket: Ticket,
    symbol: SymbolName,
    side: Side,
    volume: Decimal,
    openPrice: Decimal,
    currentPrice: NullableDecimal,
    sl: NullableDecimal,
    tp: NullableDecimal,
    profit: NullableDecimal,
    time: Time,
    comment: Comment,
  },
  strict,
);

export const WireOrder = Type.Object(
  {
    ticket: Ticket,
    symbol: SymbolName,
    side: Side,
    type: Type.Union([Type.Literal('market'), Type.Literal('limit'), Type.Literal('stop')]),
    volume: Decimal,
    filledVolume: Decimal,
    price: NullableDecimal,
    sl: NullableDecimal,
    tp: NullableDecimal,
    state: Type.Union([
      Type.Literal('placed'),
      Type.Literal('filled'),
      Type.Literal('canceled'),
      Type.Literal('rejected'),
      Type.Literal('partial'),
    ]),
    position: NullableTicket,
    timeSetup: Time,
    timeDone: Type.Union([Time, Type.Null()]),
    comment: Comment,
  },
  strict,
);

export const WireDeal = Type.Object(
  {
    ticket: Ticket,
    order: NullableTicket,
    position: Ticket,
    symbol: SymbolName,
    side: Side,
    entry: Type.Union([Type.Literal('in'), Type.Literal('out'), Type.Literal('inout')]),
    volume: Decimal,
    price: Decimal,
    profit: Decimal,
    time: Time,
    comment: Comment,
  },
  strict,
);

// ---- EA -> service -------------------------------------------------------------------------------------------

export const Hello = Type.Object(
  {
    type: Type.Literal('hello'),
    protocol: Type.Integer({ minimum: 1 }),
    ea: Type.String({ maxLength: 32 }),
    terminal: Type.Union([Type.Literal('mt5'), Type.Literal('mt4')]),
    build: Type.Integer({ minimum: 0 }),
    login: Type.String({ pattern: '^[0-9]{1,20}$' }),
    server: Type.String({ minLength: 1, maxLength: 64 }),
    company: Type.String({ maxLength: 128 }),
    currency: Type.String({ minLength: 3, maxLength: 8 }),
    marginMode: Type.Union([Type.Literal('hedging'), Type.Literal('netting')]),
    tradeAllowed: Type.Boolean(),
    /** The last event sequence number the EA has sent (0 = none yet). */
    lastSeq: Type.Integer({ minimum: 0 }),
    /**
     * The oldest event it still holds (lastSeq + 1 when it holds none): when it is past what the service
     * processed, the events between are gone and the service's snapshot stands in for them.
     */
    oldestSeq: Type.Integer({ minimum: 1 }),
  },
  strict,
);

export const Event = Type.Object(
  {
    type: Type.Literal('event'),
    seq: Type.Integer({ minimum: 1 }),
    /** MqlTradeTransaction.type without its TRADE_TRANSACTION_ prefix. */
    transaction: Type.Union([
      Type.Literal('ORDER_ADD'),
      Type.Literal('ORDER_UPDATE'),
      Type.Literal('ORDER_DELETE'),
      Type.Literal('HISTORY_ADD'),
      Type.Literal('DEAL_ADD'),
      Type.Literal('POSITION'),
      Type.Literal('REQUEST'),
    ]),
    order: NullableTicket,
    deal: NullableTicket,
    position: NullableTicket,
    symbol: Type.Union([SymbolName, Type.Null()]),
    /** State after the transaction, as the EA read it back (PositionSelectByTicket, OrderSelect, HistoryDealSelect). */
    positionState: Type.Union([WirePosition, Type.Null()]),
    orderState: Type.Union([WireOrder, Type.Null()]),
    dealState: Type.Union([WireDeal, Type.Null()]),
    time: Time,
  },
  strict,
);

export const Heartbeat = Type.Object(
  {
    type: Type.Literal('heartbeat'),
    balance: Decimal,
    equity: Decimal,
    tradeAllowed: Type.Boolean(),
    time: Time,
  },
  strict,
);

export const Ack = Type.Object(
  {
    type: Type.Literal('ack'),
    id: Id,
    /** MqlTradeResult.retcode (10009 done, 10008 placed, 10010 partial, ...). */
    retcode: Type.Integer(),
    message: Type.String({ maxLength: 256 }),
    order: NullableTicket,
    deal: NullableTicket,
    position: NullableTicket,
    volume: NullableDecimal,
    price: NullableDecimal,
    time: Time,
    /** true when this is the remembered answer to a command id executed before (never executed twice). */
    repeated: Type.Boolean(),
    /**
     * With 10024 (too many requests): when to send again, where the EA knows (its own pacing of OrderSend); the
     * terminal's own retcodes carry no hint (null).
     */
    retryAfterSec: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  },
  strict,
);

export const Snapshot = Type.Object(
  {
    type: Type.Literal('snapshot'),
    id: Id,
    balance: Decimal,
    equity: Decimal,
    currency: Type.String({ minLength: 3, maxLength: 8 }),
    positions: Type.Array(WirePosition, { maxItems: 10_000 }),
    orders: Type.Array(WireOrder, { maxItems: 10_000 }),
    history: Type.Array(WireOrder, { maxItems: 10_000 }),
    deals: Type.Array(WireDeal, { maxItems: 10_000 }),
    /** The last event sequence number sent before this snapshot was read. */
    seq: Type.Integer({ minimum: 0 }),
  },
  strict,
);

export const SymbolInfo = Type.Object(
  {
    type: Type.Literal('symbol'),
    id: Id,
    symbol: SymbolName,
    found: Type.Boolean(),
    volumeMin: NullableDecimal,
    volumeMax: NullableDecimal,
    volumeStep: NullableDecimal,
    contractSize: NullableDecimal,
    tickSize: NullableDecimal,
    digits: Type.Union([Type.Integer({ minimum: 0, maximum: 12 }), Type.Null()]),
    bid: NullableDecimal,
    ask: NullableDecimal,
  },
  strict,
);

/** A read the EA refused (busy): the service retries after `retryAfterSec`. */
export const RequestError = Type.Object(
  {
    type: Type.Literal('request_error'),
    id: Id,
    code: Type.Union([Type.Literal('busy'), Type.Literal('failed')]),
    message: Type.String({ maxLength: 256 }),
    retryAfterSec: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  },
  strict,
);

// ---- service -> EA -------------------------------------------------------------------------------------------

export const Welcome = Type.Object(
  {
    type: Type.Literal('welcome'),
    protocol: Type.Integer({ minimum: 1 }),
    /** Send events from resumeFrom + 1 on; the EA resends what it still holds after it. */
    resumeFrom: Type.Integer({ minimum: 0 }),
    heartbeatSec: Type.Integer({ minimum: 1 }),
    /** How many command ids the EA must remember at least (never execute one twice). */
    rememberCommands: Type.Integer({ minimum: 1 }),
  },
  strict,
);

/** Every event up to seq is processed: the EA may forget them. */
export const Received = Type.Object({ type: Type.Literal('received'), seq: Type.Integer({ minimum: 0 }) }, strict);

export const Command = Type.Object(
  {
    type: Type.Literal('command'),
    /** Our correlation tag for an open (also the order comment), else a command id of ours. */
    id: Id,
    /** MqlTradeRequest.action without TRADE_ACTION_. */
    action: Type.Union([
      Type.Literal('DEAL'),
      Type.Literal('PENDING'),
      Type.Literal('SLTP'),
      Type.Literal('MODIFY'),
      Type.Literal('REMOVE'),
    ]),
    symbol: Type.Union([SymbolName, Type.Null()]),
    /** ORDER_TYPE_ without its prefix, lower case: buy, sell, buy_limit, sell_limit, buy_stop, sell_stop. */
    orderType: Type.Union([
      Type.Literal('buy'),
      Type.Literal('sell'),
      Type.Literal('buy_limit'),
      Type.Literal('sell_limit'),
      Type.Literal('buy_stop'),
      Type.Literal('sell_stop'),
      Type.Null(),
    ]),
    volume: NullableDecimal,
    price: NullableDecimal,
    sl: NullableDecimal,
    tp: NullableDecimal,
    /** The position a DEAL closes (by ticket) or SLTP changes. */
    position: NullableTicket,
    /** The pending order MODIFY or REMOVE acts on. */
    order: NullableTicket,
    comment: Comment,
  },
  strict,
);

export const SnapshotRequest = Type.Object(
  { type: Type.Literal('snapshot_request'), id: Id, dealsSince: Time },
  strict,
);
export const SymbolRequest = Type.Object({ type: Type.Literal('symbol_request'), id: Id, symbol: SymbolName }, strict);

export const ProtocolError = Type.Object(
  {
    type: Type.Literal('error'),
    code: Type.String({ maxLength: 64 }),
    message: Type.String({ maxLength: 512 }),
    /** Whether the service closes the connection after this message. */
    fatal: Type.Boolean(),
  },
  strict,
);

export const EA_MESSAGES = {
  hello: Hello,
  event: Event,
  heartbeat: Heartbeat,
  ack: Ack,
  snapshot: Snapshot,
  symbol: SymbolInfo,
  request_error: RequestError,
} as const satisfies Record<string, TSchema>;

export const SERVICE_MESSAGES = {
  welcome: Welcome,
  received: Received,
  command: Command,
  snapshot_request: SnapshotRequest,
  symbol_request: SymbolRequest,
  error: ProtocolError,
} as const satisfies Record<string, TSchema>;

export type WirePosition = Static<typeof WirePosition>;
export type WireOrder = Static<typeof WireOrder>;
export type WireDeal = Static<typeof WireDeal>;
export type HelloMsg = Static<typeof Hello>;
export type EventMsg = Static<typeof Event>;
export type TransactionType = EventMsg['transaction'];
export type HeartbeatMsg = Static<typeof Heartbeat>;
export type AckMsg = Static<typeof Ack>;
export type SnapshotMsg = Static<typeof Snapshot>;
export type SymbolMsg = Static<typeof SymbolInfo>;
export type RequestErrorMsg = Static<typeof RequestError>;
export type WelcomeMsg = Static<typeof Welcome>;
export type ReceivedMsg = Static<typeof Received>;
export type CommandMsg = Static<typeof Command>;
export type SnapshotRequestMsg = Static<typeof SnapshotRequest>;
export type SymbolRequestMsg = Static<typeof SymbolRequest>;
export type ProtocolErrorMsg = Static<typeof ProtocolError>;

export type EaMessage = HelloMsg | EventMsg | HeartbeatMsg | AckMsg | SnapshotMsg | SymbolMsg | RequestErrorMsg;
export type ServiceMessage =
  | WelcomeMsg
  | ReceivedMsg
  | CommandMsg
  | SnapshotRequestMsg
  | SymbolRequestMsg
  | ProtocolErrorMsg;
