import type { Decimal } from './decimal.js';
import type { OrderType, Side } from './types.js';
import type { IntentAction } from './intent-action.js';
import type { IntentState } from './intent.js';

/**
 * The copy ledger as the engine sees it: trades, copy intents, position links and the watcher's view of Master
 * items. Volumes and prices are `Decimal`, never strings to re-parse. The store maps its rows to these and back
 * (src/store/ledger-mappers.ts). Sides, order types, link kinds and a row's action and state are typed (the mappers
 * read a row's action and state through `intentAction` and `intentState`, which refuse a name we never write); a
 * trade's action, source and status stay the strings its row holds.
 */

/** A trade on a Master (sent through the API or seen by the watcher) and what the Master's broker said. */
export interface Trade {
  id: string;
  userId: string;
  masterAccountId: string;
  groupId: string | null;
  source: string;
  action: string;
  symbol: string;
  side: Side;
  orderType: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  tag: string;
  status: string;
  masterOutcome: unknown;
  masterPositionId: string | null;
  masterOrderId: string | null;
  fillPrice: Decimal | null;
  requestId: string | null;
  copiedTo: number;
  /** Stable id of the master action this trade copies; null for API orders. */
  actionId: string | null;
  actionAt: Date | null;
  /** The Master trade's magic number and comment, where its platform carries them (the rule's filters read them). */
  masterMagic?: number | null;
  masterComment?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

type TradeRequired =
  | 'id'
  | 'userId'
  | 'masterAccountId'
  | 'source'
  | 'action'
  | 'symbol'
  | 'side'
  | 'orderType'
  | 'volume'
  | 'tag'
  | 'status';
/** A trade to record: nullable fields and those the store defaults may be left out. */
export type NewTrade = Pick<Trade, TradeRequired> & Partial<Omit<Trade, TradeRequired>>;

/** One ledger row: what was planned for one Slave of one master action, and what its broker answered. */
export interface CopyIntent {
  id: string;
  tradeId: string;
  slaveAccountId: string;
  tag: string;
  action: IntentAction;
  symbol: string;
  side: Side;
  plannedVolume: Decimal | null;
  plannedPrice: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  state: IntentState;
  skipReason: string | null;
  outcome: unknown;
  brokerOrderId: string | null;
  brokerPositionId: string | null;
  filledVolume: Decimal | null;
  fillPrice: Decimal | null;
  slippage: Decimal | null;
  /** Hop latencies in ms: plan, record, send (to adapter), broker ack. */
  latency: unknown;
  attempts: number;
  /** The Slave position or order a follow-up action addresses. */
  targetId: string | null;
  /** Tags of earlier attempts proven absent at the broker. */
  prevTags: unknown;
  /** What the sizing read and decided (domain/receipts/sizing-record.ts); null where no sizing decided the row. */
  sizingInputs: unknown;
  /** The Slave's rule revision the row was planned under; null for rows planned before revisions (0025). */
  ruleRevision: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewIntent = Pick<
  CopyIntent,
  'id' | 'tradeId' | 'slaveAccountId' | 'tag' | 'action' | 'symbol' | 'side' | 'state'
> &
  Partial<Omit<CopyIntent, 'id' | 'tradeId' | 'slaveAccountId' | 'tag' | 'action' | 'symbol' | 'side' | 'state'>>;

export type LinkKind = 'position' | 'order';

/** Which Slave position (or pending order) copies which Master position (or pending order). */
export interface PositionLink {
  id: string;
  kind: LinkKind;
  masterAccountId: string;
  masterPositionId: string;
  slaveAccountId: string;
  slavePositionId: string;
  intentId: string | null;
  /** The Slave position's volume as last written by us (partial closes size from it). */
  volume: Decimal | null;
  open: boolean;
  closedReason: string | null;
  createdAt: Date;
  closedAt: Date | null;
}

export type NewLink = Pick<
  PositionLink,
  'id' | 'masterAccountId' | 'masterPositionId' | 'slaveAccountId' | 'slavePositionId'
> &
  Partial<Omit<PositionLink, 'id' | 'masterAccountId' | 'masterPositionId' | 'slaveAccountId' | 'slavePositionId'>>;

/** What the watcher last saw of one Master position or pending order; `seq` numbers the item's actions. */
export interface MasterItem {
  accountId: string;
  kind: LinkKind;
  itemId: string;
  symbol: string;
  side: Side;
  orderType: OrderType;
  volume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  tag: string | null;
  open: boolean;
  seq: number;
  originTradeId: string | null;
  openedAt: Date | null;
  updatedAt: Date;
}

type ItemRequired = 'accountId' | 'kind' | 'itemId' | 'symbol' | 'side' | 'orderType' | 'volume';
export type NewMasterItem = Pick<MasterItem, ItemRequired> & Partial<Omit<MasterItem, ItemRequired>>;
