import type { Capabilities } from '../../domain/capabilities.js';

/** The simulator supports everything natively, so the sim adapter is the reference every other adapter is compared to. */
const HEDGING: Capabilities = Object.freeze<Capabilities>({
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
    // A simulated order may carry a magic number and a comment, kept on its position (demo of the rule's filters).
    magicNumber: true,
    orderComment: true,
  },
  correlationTag: { field: 'tag', maxLength: 64 },
  rateLimitPerSecond: 1000,
  volumeUnit: 'lots',
});
const NETTING: Capabilities = Object.freeze({ ...HEDGING, hedging: false });

/** A pure function of the simulated account: a netting account reports hedging false, everything else is the same. */
export function simCapabilities(account: { hedging: boolean }): Capabilities {
  return account.hedging ? HEDGING : NETTING;
}

/** The planning figure before an account is known (hedging, the simulator's default). */
export const SIM_CAPABILITIES: Capabilities = simCapabilities({ hedging: true });
