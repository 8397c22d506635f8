import type { OrderOutcome } from '../platforms/adapter.js';
import type { LinkChange } from '../store/repos/trades.js';
import type { IntentOp } from './intent-ops.js';

/**
 * The links a broker's refusal closes: what the copy addressed is no longer there to follow. Other refusals
 * change no link.
 */
export function refusedLinkChanges(
  sid: string,
  op: IntentOp,
  outcome: Exclude<OrderOutcome, { kind: 'confirmed' }>,
  links: LinkChange[],
): void {
  if (outcome.kind !== 'rejected') return;
  const code = outcome.code;
  // The broker no longer has what the copy addressed: it was closed or cancelled outside the service.
  if ((op.kind === 'close' || op.kind === 'modify') && code === 'position_not_found')
    links.push({
      op: 'close',
      key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId },
      reason: 'user_closed',
    });
  if ((op.kind === 'cancel' || op.kind === 'modify_order') && code === 'order_not_found')
    links.push({
      op: 'close',
      key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
      reason: 'gone',
    });
  // The Slave's copy filled before the Master's cancel reached it: no pending order is left to follow (a
  // modify_order keeps its link, as the Master's order may still fill and the fill links the Slave's position).
  if (op.kind === 'cancel' && code === 'order_filled')
    links.push({
      op: 'close',
      key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
      reason: 'filled',
    });
  if (op.kind === 'fill' && (code === 'slave_order_gone' || code === 'stale_action'))
    links.push({
      op: 'close',
      key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
      reason: code,
    });
}
