import type { Capabilities } from '../../domain/capabilities.js';
import { MT_COMMENT_LIMIT } from './comment.js';

export type MtPlatform = 'mt4' | 'mt5';

/**
 * What the MetaTrader adapter can do through MetaApi REST. MT4 is always hedging; an MT5 account is hedging
 * or netting by its server's setting (account-information `marginMode`), which the adapter reads on connect.
 */
export function metaTraderCapabilities(opts: { platform: MtPlatform; hedging: boolean }): Capabilities {
  return opts.platform === 'mt4' || opts.hedging ? HEDGING : NETTING;
}

function build(hedging: boolean): Capabilities {
  return Object.freeze<Capabilities>({
    platform: 'platforma',
    hedging,
    orderTypes: ['market', 'limit', 'stop'],
    has: {
      marketOrders: true,
      pendingOrders: true,
      // ORDER_MODIFY moves price and SL/TP; MT cannot change a pending order's volume.
      modifyPendingOrder: true,
      cancelPendingOrder: true,
      modifyPositionSlTp: true,
      partialClose: true,
      // POSITIONS_CLOSE_SYMBOL exists, but the ledger needs one outcome per position, so we loop.
      closeAll: 'emulated',
      stopLossOnOpen: true,
      takeProfitOnOpen: true,
      lookupByTag: true,
      // REST has no push; the websocket API does, but polling keeps one code path for MetaApi and a bridge.
      streamingEvents: 'emulated',
      orderHistory: true,
    },
    correlationTag: { field: 'clientId', maxLength: MT_COMMENT_LIMIT },
    // MetaApi meters CPU credits per account per second; a few calls a second stays far below them.
    rateLimitPerSecond: 5,
    volumeUnit: 'lots',
  });
}
const HEDGING = build(true);
const NETTING = build(false);

/** Planning figure before an account is known: MT5 hedging, the common retail setup. */
export const METATRADER_CAPABILITIES: Capabilities = metaTraderCapabilities({ platform: 'mt5', hedging: true });
