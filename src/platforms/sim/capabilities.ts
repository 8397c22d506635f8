import type { Capabilities } from '../adapter.js';

/** The simulator supports everything natively, so the sim adapter is the reference every other adapter is compared to. */
export const SIM_CAPABILITIES: Capabilities = {
  platform: 'sim',
  hedging: true,
  orderTypes: ['market', 'limit', 'stop'],
  has: {
    marketOrders: true,
    pendingOrders: true,
    modifyPendingOrder: true,
    cancelPendingOrder: true,
    modifyPositionSlTp: true,
    partialClose: true,
    closeAll: true,
    stopLossOnOpen: true,
    takeProfitOnOpen: true,
    lookupByTag: true,
    streamingEvents: true,
    orderHistory: true,
    quotes: true,
  },
  correlationTag: { field: 'tag', maxLength: 64 },
  rateLimitPerSecond: 1000,
  volumeUnit: 'lots',
};

/** A netting sim account reports hedging false; everything else is the same. */
export function simCapabilities(hedging: boolean): Capabilities {
  return { ...SIM_CAPABILITIES, hedging, has: { ...SIM_CAPABILITIES.has }, orderTypes: [...SIM_CAPABILITIES.orderTypes] };
}
