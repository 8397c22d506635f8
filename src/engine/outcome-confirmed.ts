import type { Account } from '../domain/account.js';
import { opposite } from '../domain/copy-mapping.js';
import { isHeal, intentAction } from '../domain/intent-action.js';
import { type Decimal, decText } from '../domain/decimal.js';
import { newId } from '../domain/ids.js';
import type { Side } from '../domain/types.js';
import type { ConfirmedOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import type { LinkChange } from '../store/repos/trades.js';
import type { IntentOp } from './intent-ops.js';
import type { TradeLike } from './ledger.js';
import type { CopyIntent } from '../domain/ledger-types.js';

export type OutcomeRow = Pick<CopyIntent, 'id' | 'action' | 'symbol' | 'side' | 'plannedVolume' | 'tag' | 'targetId'>;

/** What a confirmed write's ledger change is built from (one per outcome, shared by the rules below). */
export interface ConfirmedCtx {
  master: Account;
  tradeId: string;
  row: OutcomeRow;
  sid: string;
  volume: Decimal;
  outcome: ConfirmedOutcome;
  links: LinkChange[];
  events: NewEvent[];
}

/**
 * Positive = worse for the Slave than the Master's price, on the side the Slave traded. Null where the two prices
 * do not measure the same execution: a pending order (its price is the Slave's own), a modify, or an open on the
 * other side of the Master's (a reverse rule).
 */
export function slippageOf(op: IntentOp, row: OutcomeRow, trade: TradeLike, outcome: ConfirmedOutcome): Decimal | null {
  const isOpenLike = op.kind === 'place' || op.kind === 'fill';
  if (
    !outcome.fillPrice ||
    !trade.fillPrice ||
    !(isOpenLike || op.kind === 'close') ||
    !(!isOpenLike || (op.kind === 'place' && op.req.type === 'market') || op.kind === 'fill')
  )
    return null;
  const execSide: Side = isOpenLike ? row.side : opposite(row.side);
  if (!(isOpenLike ? row.side === trade.side : true)) return null;
  const diff = outcome.fillPrice.minus(trade.fillPrice);
  return execSide === 'buy' ? diff : diff.neg();
}

/** The links and events a confirmed write adds, by what the write was. */
export function confirmedChanges(c: ConfirmedCtx, op: IntentOp): void {
  switch (op.kind) {
    case 'place':
    case 'fill':
      return openedChanges(c, op);
    case 'close':
      return op.volume ? reducedChanges(c, op, op.volume) : closedChanges(c, op);
    case 'modify':
      c.events.push({
        userId: c.master.userId,
        accountId: c.sid,
        type: 'position.modified',
        payload: {
          role: 'slave',
          positionId: op.positionId,
          symbol: c.row.symbol,
          stopLoss: decText(op.stopLoss),
          takeProfit: decText(op.takeProfit),
          intentId: c.row.id,
        },
      });
      return;
    case 'cancel':
      c.links.push({
        op: 'close',
        key: { slaveAccountId: c.sid, kind: 'order', slavePositionId: op.orderId },
        reason: 'cancelled',
      });
      return;
    case 'modify_order':
      return;
  }
}

/**
 * An open or a followed fill: the Slave's position linked to the Master's (or its pending order to the Master's
 * order); a followed fill first closes the link of the Slave's pending copy it replaces.
 */
function openedChanges(c: ConfirmedCtx, op: Extract<IntentOp, { kind: 'place' | 'fill' }>): void {
  const { outcome, row, sid } = c;
  if (op.kind === 'fill')
    c.links.push({
      op: 'close',
      key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
      reason: 'filled',
    });
  const masterPos = op.kind === 'fill' ? op.masterPositionId : op.link === 'position' ? op.masterItemId : null;
  if (outcome.positionId && masterPos) {
    const filled = outcome.filledVolume ?? c.volume;
    c.links.push({
      op: 'upsert',
      link: {
        id: newId('act'),
        kind: 'position',
        masterAccountId: c.master.id,
        masterPositionId: masterPos,
        slaveAccountId: sid,
        slavePositionId: outcome.positionId,
        intentId: row.id,
        volume: filled,
      },
    });
    c.events.push({
      userId: c.master.userId,
      accountId: sid,
      type: 'position.opened',
      payload: {
        role: 'slave',
        intentId: row.id,
        tradeId: c.tradeId,
        positionId: outcome.positionId,
        symbol: row.symbol,
        side: row.side,
        volume: decText(filled),
        price: decText(outcome.fillPrice),
        masterPositionId: masterPos,
      },
    });
  } else if (op.kind === 'place' && op.link === 'order' && outcome.brokerOrderId && op.masterItemId) {
    c.links.push({
      op: 'upsert',
      link: {
        id: newId('act'),
        kind: 'order',
        masterAccountId: c.master.id,
        masterPositionId: op.masterItemId,
        slaveAccountId: sid,
        slavePositionId: outcome.brokerOrderId,
        intentId: row.id,
        volume: c.volume,
      },
    });
  }
}

/** A partial close: the link's volume comes down by what filled (or what was asked, when the broker says nothing). */
function reducedChanges(c: ConfirmedCtx, op: Extract<IntentOp, { kind: 'close' }>, volume: Decimal): void {
  const { outcome } = c;
  c.links.push({
    op: 'adjust',
    key: { slaveAccountId: c.sid, kind: 'position', slavePositionId: op.positionId },
    by: (outcome.filledVolume ?? volume).neg(),
  });
  c.events.push({
    userId: c.master.userId,
    accountId: c.sid,
    type: 'position.modified',
    payload: {
      role: 'slave',
      positionId: op.positionId,
      symbol: c.row.symbol,
      volume: op.before ? op.before.minus(outcome.filledVolume ?? volume).toString() : undefined,
      intentId: c.row.id,
    },
  });
}

/** A whole close: a heal's closes an orphan, any other follows the Master's close. */
function closedChanges(c: ConfirmedCtx, op: Extract<IntentOp, { kind: 'close' }>): void {
  c.links.push({
    op: 'close',
    key: { slaveAccountId: c.sid, kind: 'position', slavePositionId: op.positionId },
    reason: isHeal(intentAction(c.row.action)) ? 'orphan_closed' : 'master_closed',
  });
  c.events.push({
    userId: c.master.userId,
    accountId: c.sid,
    type: 'position.closed',
    payload: {
      role: 'slave',
      positionId: op.positionId,
      symbol: c.row.symbol,
      side: c.row.side,
      volume: decText(c.volume),
      price: decText(c.outcome.fillPrice),
      reason: 'copy',
    },
  });
}
