import type { NewEvent } from '../store/repos/events.js';
import type { IntentRow, TradeRow } from '../store/repos/trades.js';

type TradeFields = Pick<
  TradeRow,
  'id' | 'userId' | 'masterAccountId' | 'source' | 'action' | 'symbol' | 'side' | 'volume'
> &
  Partial<Pick<TradeRow, 'masterPositionId' | 'fillPrice' | 'stopLoss' | 'takeProfit' | 'masterOutcome'>>;
type IntentFields = Pick<IntentRow, 'id' | 'slaveAccountId' | 'state' | 'symbol' | 'side'> &
  Partial<Pick<IntentRow, 'skipReason' | 'outcome' | 'plannedVolume'>>;

/**
 * The events of a recorded master action: the Master's own position event (watcher actions) and one per
 * Slave that was skipped or denied. Built from the stored rows alone, so whoever marks the trade accepted
 * (the engine right after handing the sends out, or the settle loop after a crash) writes the same events
 * in the same transaction as that change.
 */
export function actionEvents(t: TradeFields, intents: IntentFields[]): NewEvent[] {
  const userId = t.userId;
  const evs: NewEvent[] = [];
  if (t.source === 'watcher' && t.masterPositionId) {
    const base = { role: 'master', positionId: t.masterPositionId, symbol: t.symbol, tradeId: t.id };
    const after = (t.masterOutcome as { volumeAfter?: string } | null)?.volumeAfter;
    if (t.action === 'open')
      evs.push({
        userId,
        accountId: t.masterAccountId,
        type: 'position.opened',
        payload: { ...base, side: t.side, volume: t.volume, price: t.fillPrice },
      });
    else if (t.action === 'close')
      evs.push({
        userId,
        accountId: t.masterAccountId,
        type: 'position.closed',
        payload: { ...base, side: t.side, volume: t.volume, price: t.fillPrice, reason: 'master' },
      });
    else if (t.action === 'reduce' || t.action === 'increase')
      evs.push({
        userId,
        accountId: t.masterAccountId,
        type: 'position.modified',
        payload: { ...base, ...(after ? { volume: after } : {}) },
      });
    else if (t.action === 'modify')
      evs.push({
        userId,
        accountId: t.masterAccountId,
        type: 'position.modified',
        payload: { ...base, stopLoss: t.stopLoss, takeProfit: t.takeProfit },
      });
  }
  for (const i of intents) {
    if (i.state === 'skipped') {
      const [reason, ...rest] = (i.skipReason ?? '').split(': ');
      evs.push({
        userId,
        accountId: i.slaveAccountId,
        type: 'copy.skipped',
        payload: { tradeId: t.id, intentId: i.id, reason, detail: rest.join(': ') || null, symbol: i.symbol },
      });
    } else if (i.state === 'denied') {
      const o = (i.outcome ?? {}) as { code?: string; message?: string };
      evs.push({
        userId,
        accountId: i.slaveAccountId,
        type: 'copy.denied',
        payload: {
          tradeId: t.id,
          intentId: i.id,
          symbol: i.symbol,
          side: i.side,
          volume: i.plannedVolume ?? '0',
          code: o.code ?? 'denied',
          message: o.message ?? '',
        },
      });
    }
  }
  return evs;
}
