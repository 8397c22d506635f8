import type { OrderType, Platform } from './types.js';

/**
 * What a broker account can do, as the domain sees it: the planner denies an action whose flag is false and a
 * copy rule is checked against it when saved. Each platform computes it from the account alone (a pure function
 * of what the account is: hedging or netting, MT4 or MT5), so two reads of one account never disagree.
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
    /** Positions and orders read from this platform carry the EA's magic number (copy rule magic filters). */
    magicNumber?: Support;
    /** Positions and orders read from this platform carry their comment (copy rule comment filters). */
    orderComment?: Support;
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

/** The flags an action may need (everything in `has` but the optional reads: quotes, magic numbers, comments). */
export type CapabilityFlag = Exclude<keyof Capabilities['has'], 'quotes' | 'magicNumber' | 'orderComment'>;
