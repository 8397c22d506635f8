import type { Capabilities } from '../../domain/capabilities.js';

/**
 * orderCode is the client's own order id (the spec's "Client-originated Identifiers"); the spec gives no length
 * limit that we found, so we keep to 32 characters, which every tag we make fits (unconfirmed: docs/platforms).
 */
export const DXTRADE_TAG_MAX = 32;

function build(hedging: boolean): Capabilities {
  return Object.freeze<Capabilities>({
    platform: 'platformd',
    // A position-based account (Account Details `isPositionBased`) keeps one position per fill (hedging); an
    // account that is not nets per instrument, and takes no order groups (the spec: "Order groups can be issued
    // only for Position-based accounts"), so SL/TP cannot ride with an open there.
    hedging,
    orderTypes: ['market', 'limit', 'stop'],
    has: {
      marketOrders: true,
      pendingOrders: true,
      modifyPendingOrder: true,
      cancelPendingOrder: true,
      modifyPositionSlTp: hedging,
      partialClose: true,
      closeAll: 'emulated',
      stopLossOnOpen: hedging,
      takeProfitOnOpen: hedging,
      // Positions do not carry orderCode: a tag is found through the order that carries it.
      lookupByTag: 'emulated',
      // The REST API has no push; subscribe() polls and diffs (the push API is not used yet).
      streamingEvents: 'emulated',
      orderHistory: true,
    },
    correlationTag: { field: 'orderCode', maxLength: DXTRADE_TAG_MAX },
    // The spec's default: trading requests 1 per second per session.
    rateLimitPerSecond: 1,
    // The wire counts units (the spec: "in units (not in lots)"); the adapter converts with each instrument's
    // lotSize, since the engine sizes every copy in lots.
    volumeUnit: 'lots',
  });
}

const HEDGING = build(true);
const NETTING = build(false);

/** A pure function of the account: position-based (hedging) or netting. */
export function dxCapabilities(account: { hedging?: boolean } = {}): Capabilities {
  return account.hedging === false ? NETTING : HEDGING;
}
