import type { Decimal } from 'decimal.js';

/** Platform type values used on both route families (open point: the spec only names the platforms). */
export const PLATFORMS = ['sim', 'platforma', 'platformb', 'platformc', 'platformd'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const ROLES = ['master', 'slave'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Copy/connection status of an account. The spec fixes only `connected`; the rest are our open-point choice.
 * - connected: reachable and copying
 * - paused: copying switched off by the user or the risk guard
 * - locked: a panic-close locked copying until resumed
 * - disconnected: the broker connection is down
 * - reconnect_required: the broker needs the user to sign in again (OAuth)
 * - disabled: a duplicate connection of a broker account connected elsewhere (migration 0004); never copies
 * - unverified: its connection test failed (the broker refused a read); not assignable until a test passes
 */
export const ACCOUNT_STATUSES = [
  'connected',
  'paused',
  'locked',
  'disconnected',
  'reconnect_required',
  'disabled',
  'unverified',
] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export const SIDES = ['buy', 'sell'] as const;
export type Side = (typeof SIDES)[number];

export const ORDER_TYPES = ['market', 'limit', 'stop'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export interface Health {
  /** Summary: ok when every flag is good, degraded when trading works but something is off, down otherwise. */
  state: 'ok' | 'degraded' | 'down';
  connected: boolean;
  tradingAllowed: boolean;
  inSync: boolean;
  dataStale: boolean;
  reconnectRequired: boolean;
  checkedAt: string | null;
  lastError: string | null;
}

export interface InstrumentSpec {
  symbol: string;
  volumeStep: Decimal;
  minVolume: Decimal;
  maxVolume: Decimal;
  /** Units of the base asset per 1.0 volume (lot). */
  contractSize: Decimal;
  /** Smallest price increment. */
  tickSize: Decimal;
}

/** A broker's current prices of a symbol: buy at the ask, sell at the bid. */
export interface Quote {
  bid: Decimal;
  ask: Decimal;
  /** When the broker priced it (ISO), when it says. */
  time: string | null;
}

export interface Position {
  id: string;
  symbol: string;
  side: Side;
  volume: Decimal;
  openPrice: Decimal;
  currentPrice: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  profit: Decimal | null;
  openedAt: string;
  /** Correlation tag the position was opened with, when the broker keeps it. */
  tag: string | null;
  /** The EA's magic number (MT4/MT5), where the platform carries one (capability `magicNumber`). */
  magic?: number | null;
  /** The trade's comment as the trader or EA wrote it, where the platform carries one (capability `orderComment`). */
  comment?: string | null;
}

export type OrderStatus = 'pending' | 'filled' | 'cancelled' | 'rejected';

export interface Order {
  id: string;
  symbol: string;
  side: Side;
  type: OrderType;
  volume: Decimal;
  filledVolume: Decimal;
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  status: OrderStatus;
  positionId: string | null;
  createdAt: string;
  updatedAt: string;
  tag: string | null;
  /** As on Position. */
  magic?: number | null;
  /** As on Position. */
  comment?: string | null;
}

/**
 * One execution the broker recorded on an account: a fill that opened or added to a position (`in`) or closed or
 * reduced one (`out`). The Master history cursor reads these to find what happened while nobody watched.
 */
export interface Deal {
  id: string;
  /** The order this deal filled, when the broker names it. */
  orderId: string | null;
  positionId: string;
  symbol: string;
  /** The deal's own direction: a sell deal closes a buy position. */
  side: Side;
  volume: Decimal;
  price: Decimal | null;
  entry: 'in' | 'out';
  /** Broker execution time (ISO). */
  time: string;
  /** The correlation tag of the order or position, when the broker keeps it on the deal. */
  tag: string | null;
  /**
   * Money the broker booked on this deal, in the account currency, where its history gives it (cTrader
   * closePositionDetail and deal commission, MetaApi deal profit/swap/commission, the simulator's books); null or
   * absent where it does not (TradeLocker executions carry none), and the history computes profit from prices.
   */
  profit?: Decimal | null;
  swap?: Decimal | null;
  commission?: Decimal | null;
}

export interface AccountInfo {
  balance: Decimal;
  equity: Decimal;
  currency: string;
  /** Broker's own account number as shown to the user. */
  brokerAccountNumber: string;
  /** Whether the broker lets this login open trades, where the platform says (MetaApi tradeAllowed, cTrader accessRights). */
  tradingAllowed?: boolean;
}
