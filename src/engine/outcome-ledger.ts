import type { Account } from '../domain/account.js';
import { Decimal, decText } from '../domain/decimal.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import type { IntentUpdate, LinkChange, OutcomeWrite } from '../store/repos/trades.js';
import type { IntentOp } from './intent-ops.js';
import { outcomeUpdate, type TradeLike } from './ledger.js';
import { confirmedChanges, slippageOf, type OutcomeRow } from './outcome-confirmed.js';
import { refusedLinkChanges } from './outcome-refused.js';

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
    slippage = slippageOf(op, row, trade, outcome);
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
    confirmedChanges({ master, tradeId, row, sid, volume, outcome, links, events }, op);
  } else {
    events.push({
      userId,
      accountId: sid,
      type: `copy.${outcome.kind}`,
      payload: Object.assign(base(), { code: outcome.code, message: outcome.message }),
    });
    refusedLinkChanges(sid, op, outcome, links);
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
