import type { Account } from '../domain/account.js';
import { opposite } from '../domain/copy-mapping.js';
import { isHeal, intentAction } from '../domain/intent-action.js';
import { Decimal, decText } from '../domain/decimal.js';
import { newId } from '../domain/ids.js';
import type { Side } from '../domain/types.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import type { IntentUpdate, LinkChange, OutcomeWrite } from '../store/repos/trades.js';
import type { CopyIntent } from '../domain/ledger-types.js';
import type { IntentOp } from './intent-ops.js';
import { outcomeUpdate, type TradeLike } from './ledger.js';

type OutcomeRow = Pick<CopyIntent, 'id' | 'action' | 'symbol' | 'side' | 'plannedVolume' | 'tag' | 'targetId'>;

/**
 * What one settled broker write changes in the ledger: the intent's outcome (broker answer, fill, slippage,
 * latencies), the links it opens, closes or resizes, and its events. Pure; written by the outcome writer in
 * batches, or at once by the settle loop.
 */
export function outcomeWrite(
  master: Account,
  tradeId: string,
  trade: TradeLike,
  row: OutcomeRow,
  slaveAccountId: string,
  op: IntentOp,
  outcome: OrderOutcome,
  extra: { attempts?: number; latency?: Record<string, number>; prevTags?: string[] },
): OutcomeWrite {
  const userId = master.userId;
  const sid = slaveAccountId;
  const volume = row.plannedVolume ?? new Decimal(0);
  const volumeText = decText(volume);
  // A fresh object each time, keys added by Object.assign: not `{ ...base, code }` (see the note at the end).
  const base = () => ({ tradeId, intentId: row.id, symbol: row.symbol, side: row.side, volume: volumeText });
  const links: LinkChange[] = [];
  const events: NewEvent[] = [];
  let slippage: Decimal | null = null;
  if (outcome.kind === 'confirmed') {
    const filled = outcome.filledVolume ?? volume;
    const isOpenLike = op.kind === 'place' || op.kind === 'fill';
    if (
      outcome.fillPrice &&
      trade.fillPrice &&
      (isOpenLike || op.kind === 'close') &&
      (!isOpenLike || (op.kind === 'place' && op.req.type === 'market') || op.kind === 'fill')
    ) {
      // Positive = worse for the Slave than the Master's price, on the side the Slave traded.
      const execSide: Side = isOpenLike ? row.side : opposite(row.side);
      if (isOpenLike ? row.side === trade.side : true) {
        const diff = outcome.fillPrice.minus(trade.fillPrice);
        slippage = execSide === 'buy' ? diff : diff.neg();
      }
    }
    events.push({
      userId,
      accountId: sid,
      type: 'copy.confirmed',
      payload: Object.assign(base(), {
        positionId: outcome.positionId,
        orderId: outcome.brokerOrderId,
        fillPrice: decText(outcome.fillPrice),
        filledVolume: decText(outcome.filledVolume),
        slippage: decText(slippage),
      }),
    });
    switch (op.kind) {
      case 'place':
      case 'fill': {
        if (op.kind === 'fill')
          links.push({
            op: 'close',
            key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
            reason: 'filled',
          });
        const masterPos = op.kind === 'fill' ? op.masterPositionId : op.link === 'position' ? op.masterItemId : null;
        if (outcome.positionId && masterPos) {
          links.push({
            op: 'upsert',
            link: {
              id: newId('act'),
              kind: 'position',
              masterAccountId: master.id,
              masterPositionId: masterPos,
              slaveAccountId: sid,
              slavePositionId: outcome.positionId,
              intentId: row.id,
              volume: filled,
            },
          });
          events.push({
            userId,
            accountId: sid,
            type: 'position.opened',
            payload: {
              role: 'slave',
              intentId: row.id,
              tradeId,
              positionId: outcome.positionId,
              symbol: row.symbol,
              side: row.side,
              volume: decText(filled),
              price: decText(outcome.fillPrice),
              masterPositionId: masterPos,
            },
          });
        } else if (op.kind === 'place' && op.link === 'order' && outcome.brokerOrderId && op.masterItemId) {
          links.push({
            op: 'upsert',
            link: {
              id: newId('act'),
              kind: 'order',
              masterAccountId: master.id,
              masterPositionId: op.masterItemId,
              slaveAccountId: sid,
              slavePositionId: outcome.brokerOrderId,
              intentId: row.id,
              volume,
            },
          });
        }
        break;
      }
      case 'close':
        if (op.volume) {
          links.push({
            op: 'adjust',
            key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId },
            by: (outcome.filledVolume ?? op.volume).neg(),
          });
          events.push({
            userId,
            accountId: sid,
            type: 'position.modified',
            payload: {
              role: 'slave',
              positionId: op.positionId,
              symbol: row.symbol,
              volume: op.before ? op.before.minus(outcome.filledVolume ?? op.volume).toString() : undefined,
              intentId: row.id,
            },
          });
        } else {
          links.push({
            op: 'close',
            key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId },
            reason: isHeal(intentAction(row.action)) ? 'orphan_closed' : 'master_closed',
          });
          events.push({
            userId,
            accountId: sid,
            type: 'position.closed',
            payload: {
              role: 'slave',
              positionId: op.positionId,
              symbol: row.symbol,
              side: row.side,
              volume: decText(volume),
              price: decText(outcome.fillPrice),
              reason: 'copy',
            },
          });
        }
        break;
      case 'modify':
        events.push({
          userId,
          accountId: sid,
          type: 'position.modified',
          payload: {
            role: 'slave',
            positionId: op.positionId,
            symbol: row.symbol,
            stopLoss: decText(op.stopLoss),
            takeProfit: decText(op.takeProfit),
            intentId: row.id,
          },
        });
        break;
      case 'cancel':
        links.push({
          op: 'close',
          key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
          reason: 'cancelled',
        });
        break;
      case 'modify_order':
        break;
    }
  } else {
    events.push({
      userId,
      accountId: sid,
      type: `copy.${outcome.kind}`,
      payload: Object.assign(base(), { code: outcome.code, message: outcome.message }),
    });
    if (outcome.kind === 'rejected') {
      // The broker no longer has what the copy addressed: it was closed or cancelled outside the service.
      if ((op.kind === 'close' || op.kind === 'modify') && outcome.code === 'position_not_found')
        links.push({
          op: 'close',
          key: { slaveAccountId: sid, kind: 'position', slavePositionId: op.positionId },
          reason: 'user_closed',
        });
      if ((op.kind === 'cancel' || op.kind === 'modify_order') && outcome.code === 'order_not_found')
        links.push({
          op: 'close',
          key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
          reason: 'gone',
        });
      // The Slave's copy filled before the Master's cancel reached it: no pending order is left to follow (a
      // modify_order keeps its link, as the Master's order may still fill and the fill links the Slave's position).
      if (op.kind === 'cancel' && outcome.code === 'order_filled')
        links.push({
          op: 'close',
          key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
          reason: 'filled',
        });
      if (op.kind === 'fill' && (outcome.code === 'slave_order_gone' || outcome.code === 'stale_action'))
        links.push({
          op: 'close',
          key: { slaveAccountId: sid, kind: 'order', slavePositionId: op.orderId },
          reason: outcome.code,
        });
    }
  }
  // Built key by key, not spread: on Node 20 (V8 11.3) every key added after an object spread makes a new hidden
  // class, so each of a fan-out's thousand updates and payloads had its own (5.8 KB and 10 us a call; 2.7 KB and
  // 1.3 us on Node 24), and every reader of them after (the mappers, JSON.stringify) took its slow path.
  const update: IntentUpdate = outcomeUpdate(outcome, slippage, row.tag);
  if (extra.latency) update.latency = toMicroseconds(extra.latency);
  if (extra.attempts !== undefined) update.attempts = extra.attempts;
  if (extra.prevTags && extra.prevTags.length > 0) update.prevTags = extra.prevTags;
  return { intentId: row.id, update, links, events };
}

/**
 * Each hop's latency in ms, kept to the microsecond: what performance.now() gives past that is below what the
 * hops can resolve, and 15 digits a hop were a seventh of each intent's outcome document (~60 of its ~480 bytes).
 */
function toMicroseconds(latency: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k in latency) out[k] = Math.round(latency[k]! * 1000) / 1000;
  return out;
}
