import type { Capabilities } from '../../domain/capabilities.js';
import { MT_COMMENT_LIMIT } from './comment.js';

export type MtPlatform = 'mt4' | 'mt5';

/**
 * What the MetaTrader adapter can do through MetaApi REST. MT4 is always hedging; an MT5 account is hedging
 * or netting by its server's setting (account-information `marginMode`), which the adapter reads on connect.
 */
export function metaTraderCapabilities(opts: {
  platform: MtPlatform;
  hedging: boolean;
  /** Events from MetaApi's streaming API (true) or from polling REST (a gateway without a stream, e.g. a bridge). */
  streaming?: boolean;
}): Capabilities {
  const hedging = opts.platform === 'mt4' || opts.hedging;
  const streaming = opts.streaming ?? true;
  return streaming ? (hedging ? HEDGING : NETTING) : hedging ? HEDGING_POLLED : NETTING_POLLED;
}

function build(hedging: boolean, streaming: boolean): Capabilities {
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
      // MetaApi's socket.io stream pushes every change; without it, REST is polled and diffed.
      streamingEvents: streaming ? true : 'emulated',
      orderHistory: true,
      // MetaApi's positions and orders carry `magic` and `comment` (parse.ts reads them for the rule's filters).
      magicNumber: true,
      orderComment: true,
    },
    correlationTag: { field: 'clientId', maxLength: MT_COMMENT_LIMIT },
    // MetaApi meters CPU credits per account per second; a few calls a second stays far below them.
    rateLimitPerSecond: 5,
    volumeUnit: 'lots',
  });
}
const HEDGING = build(true, true);
const NETTING = build(false, true);
const HEDGING_POLLED = build(true, false);
const NETTING_POLLED = build(false, false);

/** Planning figure before an account is known: MT5 hedging, the common retail setup. */
export const METATRADER_CAPABILITIES: Capabilities = metaTraderCapabilities({ platform: 'mt5', hedging: true });
