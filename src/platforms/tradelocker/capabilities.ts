import type { Capabilities } from '../../domain/capabilities.js';

/**
 * strategyId: the docs say "up to 31 chars", but the servers take 32 and refuse 33, which is what the official
 * client (since 826a553) and its tests hold to.
 */
export const TRADELOCKER_TAG_MAX = 32;

/**
 * What the TradeLocker adapter can do. Pacing at runtime follows the limits the server publishes in
 * /trade/config; `rateLimitPerSecond` is only the planning figure before a connection exists.
 */
const CAPABILITIES: Capabilities = Object.freeze<Capabilities>({
  platform: 'platformb',
  // The server is hedging-style: opposite orders open separate positions unless one is closed explicitly.
  hedging: true,
  orderTypes: ['market', 'limit', 'stop'],
  has: {
    marketOrders: true,
    pendingOrders: true,
    modifyPendingOrder: true,
    cancelPendingOrder: true,
    modifyPositionSlTp: true,
    partialClose: true,
    // The API has "close all", but one outcome per position is what the ledger needs, so we loop.
    closeAll: 'emulated',
    stopLossOnOpen: true,
    takeProfitOnOpen: true,
    lookupByTag: true,
    // No push channel in the public REST API: subscribe() polls and diffs snapshots.
    streamingEvents: 'emulated',
    orderHistory: true,
  },
  correlationTag: { field: 'strategyId', maxLength: TRADELOCKER_TAG_MAX },
  rateLimitPerSecond: 2,
  selfPaced: true,
  volumeUnit: 'lots',
});

/** A pure function of the account; every TradeLocker account is alike (the server is hedging-style). */
export function tradeLockerCapabilities(_account: { hedging?: boolean } = {}): Capabilities {
  return CAPABILITIES;
}

export const TRADELOCKER_CAPABILITIES: Capabilities = tradeLockerCapabilities();
