import type { Capabilities, CapabilityFlag } from '../domain/capabilities.js';
import type { SkipReason } from '../domain/sizing.js';
import type { OrderType } from '../domain/types.js';

/** What a copy asks of the Slave's broker: the ledger row's action, the order type it is sent as, its SL/TP. */
export interface CopyNeeds {
  action: string;
  type: OrderType;
  stopLoss?: unknown;
  takeProfit?: unknown;
}

/** The capability flag a copy action needs on the Slave's platform; closing a whole position needs none. */
function neededFlags(n: CopyNeeds): CapabilityFlag[] {
  const opening = (type: OrderType): CapabilityFlag[] => [
    type === 'market' ? 'marketOrders' : 'pendingOrders',
    ...(n.stopLoss != null ? (['stopLossOnOpen'] as const) : []),
    ...(n.takeProfit != null ? (['takeProfitOnOpen'] as const) : []),
  ];
  switch (n.action) {
    case 'open':
    case 'order_placed':
      return opening(n.type);
    case 'increase':
    case 'heal_open':
    case 'heal_increase':
    case 'open_on_fill':
      return opening('market');
    case 'reduce':
    case 'heal_reduce':
      return ['partialClose'];
    case 'modify':
      return ['modifyPositionSlTp'];
    case 'order_modified':
      return ['modifyPendingOrder'];
    case 'order_cancelled':
      return ['cancelPendingOrder'];
    default:
      return [];
  }
}

/**
 * Capabilities are checked before sending: a copy whose Slave platform lacks what it needs (a `has` flag
 * that is false, or a pending order type it does not take) is not sent, and the ledger says why
 * (`capability_missing: partialClose ...`). 'emulated' counts as supported: the adapter builds it from
 * simpler calls.
 */
export function deniedByCapability(n: CopyNeeds, caps: Capabilities): { reason: SkipReason; detail: string } | null {
  const missing = neededFlags(n).find((flag) => caps.has[flag] === false);
  if (missing)
    return {
      reason: 'capability_missing',
      detail: `${missing} (the Slave's platform ${caps.platform} cannot do this; the copy is not sent)`,
    };
  const type = ['open', 'order_placed'].includes(n.action) ? n.type : 'market';
  if (type !== 'market' && !caps.orderTypes.includes(type)) {
    return {
      reason: 'capability_missing',
      detail: `orderTypes ${type} (the Slave's platform ${caps.platform} takes ${caps.orderTypes.join(', ')})`,
    };
  }
  return null;
}
