import type { Capabilities } from '../../domain/capabilities.js';

/** MT5's order comment holds 31 characters; the correlation tag is written there. */
export const BRIDGE_TAG_MAX = 31;

function build(hedging: boolean): Capabilities {
  return Object.freeze<Capabilities>({
    platform: 'platforma',
    hedging,
    orderTypes: ['market', 'limit', 'stop'],
    has: {
      marketOrders: true,
      pendingOrders: true,
      // TRADE_ACTION_MODIFY moves price and stops; MT5 cannot change a pending order's volume.
      modifyPendingOrder: true,
      cancelPendingOrder: true,
      modifyPositionSlTp: true,
      partialClose: true,
      closeAll: 'emulated',
      stopLossOnOpen: true,
      takeProfitOnOpen: true,
      lookupByTag: true,
      // OnTradeTransaction pushes every change over the EA's connection.
      streamingEvents: true,
      orderHistory: true,
      quotes: true,
      // The EA reports each position's and order's comment; not its magic number (yet: ea/*.mq5 would add it).
      orderComment: true,
    },
    correlationTag: { field: 'comment', maxLength: BRIDGE_TAG_MAX },
    // One terminal sends one OrderSend at a time; a few a second keeps it responsive for its own user.
    rateLimitPerSecond: 10,
    volumeUnit: 'lots',
  });
}

const HEDGING = build(true);
const NETTING = build(false);

/** What a bridged account can do: hedging or netting as its EA's hello says (ACCOUNT_MARGIN_MODE). */
export const bridgeCapabilities = (hedging: boolean): Capabilities => (hedging ? HEDGING : NETTING);
