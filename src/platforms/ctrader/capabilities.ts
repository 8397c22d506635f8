import type { Capabilities } from '../adapter.js';

/** clientOrderId is at most 50 characters (fact sheet §6); label (100) carries the same tag. */
export const CTRADER_TAG_MAX = 50;

export const CTRADER_CAPABILITIES: Capabilities = {
  platform: 'platformc',
  // HEDGED is the default account type; a NETTED account is reported by ProtoOATrader.accountType.
  hedging: true,
  orderTypes: ['market', 'limit', 'stop'],
  has: {
    marketOrders: true,
    pendingOrders: true,
    modifyPendingOrder: true,
    cancelPendingOrder: true,
    modifyPositionSlTp: true,
    partialClose: true,
    closeAll: 'emulated',
    // Market orders take SL/TP only as distances; the adapter sends distances, then fixes the exact prices.
    stopLossOnOpen: 'emulated',
    takeProfitOnOpen: 'emulated',
    lookupByTag: true,
    streamingEvents: true,
    orderHistory: true,
    quotes: true,
  },
  correlationTag: { field: 'clientOrderId', maxLength: CTRADER_TAG_MAX },
  rateLimitPerSecond: 40,
  selfPaced: true,
  volumeUnit: 'lots',
};

export function ctraderCapabilities(hedging: boolean): Capabilities {
  return { ...CTRADER_CAPABILITIES, hedging, has: { ...CTRADER_CAPABILITIES.has }, orderTypes: [...CTRADER_CAPABILITIES.orderTypes] };
}
