import { decText, type Decimal } from '../domain/decimal.js';
import type { NewEvent } from '../store/repos/events.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';

type TradeFields = Pick<
  Trade,
  'id' | 'userId' | 'masterAccountId' | 'source' | 'action' | 'symbol' | 'side' | 'volume'
> &
  Partial<Pick<Trade, 'masterPositionId' | 'fillPrice' | 'stopLoss' | 'takeProfit' | 'masterOutcome'>>;
export type IntentFields = Pick<CopyIntent, 'id' | 'slaveAccountId' | 'state' | 'symbol' | 'side'> &
  Partial<Pick<CopyIntent, 'skipReason' | 'outcome' | 'plannedVolume'>>;

/** Absent stays absent in a payload (a partial trade), as it did when these fields were strings. */
const text = (d: Decimal | null | undefined) => (d === undefined ? undefined : decText(d));

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
        payload: { ...base, side: t.side, volume: decText(t.volume), price: text(t.fillPrice) },
      });
    else if (t.action === 'close')
      evs.push({
        userId,
        accountId: t.masterAccountId,
        type: 'position.closed',
        payload: { ...base, side: t.side, volume: decText(t.volume), price: text(t.fillPrice), reason: 'master' },
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
        payload: { ...base, stopLoss: text(t.stopLoss), takeProfit: text(t.takeProfit) },
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
          volume: decText(i.plannedVolume) ?? '0',
          code: o.code ?? 'denied',
          message: o.message ?? '',
        },
      });
    }
  }
  return evs;
}
