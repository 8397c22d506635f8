import type { Capabilities } from '../../domain/capabilities.js';

/** clientOrderId is at most 50 characters (fact sheet §6); label (100) carries the same tag. */
export const CTRADER_TAG_MAX = 50;

const HEDGED: Capabilities = Object.freeze<Capabilities>({
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
});
const NETTED: Capabilities = Object.freeze({ ...HEDGED, hedging: false });

/** A pure function of the account: a NETTED account (ProtoOATrader.accountType 1) differs only in `hedging`. */
export function ctraderCapabilities(account: { hedging: boolean }): Capabilities {
  return account.hedging ? HEDGED : NETTED;
}

/** The planning figure before an account is read: HEDGED, cTrader's default account type. */
export const CTRADER_CAPABILITIES: Capabilities = ctraderCapabilities({ hedging: true });
