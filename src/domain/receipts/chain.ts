import type { CopyIntent, Trade } from '../ledger-types.js';
import { canonicalJson, sha256Hex } from './canonical.js';

/** The `prev` of an account's first receipt. */
export const GENESIS = '0'.repeat(64);

/** The ledger states a row ends in: each one gets a receipt. */
export const ENDED_STATES = ['confirmed', 'rejected', 'denied', 'skipped'] as const;

/**
 * The body of one receipt: everything the ledger knows of one ended row, as canonical JSON. The Master's evidence
 * (its trade: broker ids, time, price, volume), the sizing record (rule, inputs, spec, result), our request to the
 * Slave's broker (the correlation tag, what was asked) and its evidence (order and position ids, fill, latency per
 * hop), or the skip code with its detail. `seq` and `account` are inside, so a receipt cannot be moved in the chain.
 */
export function receiptBody(
  at: { account: string; seq: number; day: string },
  intent: CopyIntent,
  trade: Trade | null,
): string {
  return canonicalJson({
    v: 1,
    account: at.account,
    seq: at.seq,
    day: at.day,
    master: trade && {
      tradeId: trade.id,
      accountId: trade.masterAccountId,
      source: trade.source,
      action: trade.action,
      actionId: trade.actionId,
      actionAt: trade.actionAt,
      symbol: trade.symbol,
      side: trade.side,
      orderType: trade.orderType,
      volume: trade.volume,
      price: trade.price,
      stopLoss: trade.stopLoss,
      takeProfit: trade.takeProfit,
      fillPrice: trade.fillPrice,
      orderId: trade.masterOrderId,
      positionId: trade.masterPositionId,
      recordedAt: trade.createdAt,
    },
    sizing: intent.sizingInputs ?? null,
    // Only where the row names one: a row planned before revisions (migration 0025) keeps the bytes it was sealed with.
    ...(intent.ruleRevision != null ? { ruleRevision: intent.ruleRevision } : {}),
    request: {
      intentId: intent.id,
      tag: intent.tag,
      prevTags: intent.prevTags ?? null,
      action: intent.action,
      symbol: intent.symbol,
      side: intent.side,
      plannedVolume: intent.plannedVolume,
      plannedPrice: intent.plannedPrice,
      stopLoss: intent.stopLoss,
      takeProfit: intent.takeProfit,
      targetId: intent.targetId,
      recordedAt: intent.createdAt,
    },
    answer: {
      state: intent.state,
      skipReason: intent.skipReason,
      orderId: intent.brokerOrderId,
      positionId: intent.brokerPositionId,
      filledVolume: intent.filledVolume,
      fillPrice: intent.fillPrice,
      slippage: intent.slippage,
      latencyMs: intent.latency ?? null,
      attempts: intent.attempts,
      outcome: intent.outcome ?? null,
      endedAt: intent.updatedAt,
    },
  });
}

/** A receipt's hash: SHA-256 (hex) of the previous hash, a newline, and the body's bytes. */
export const receiptHash = (prevHash: string, body: string): string => sha256Hex(`${prevHash}\n${body}`);

/** The bytes a day's head signature covers. */
export const headMessage = (h: { account: string; day: string; seq: number; hash: string; keyId: string }): string =>
  canonicalJson({ v: 1, kind: 'copytrade.receipt-head', ...h });

export interface StoredReceipt {
  id: string;
  accountId: string;
  seq: number;
  day: string;
  prevHash: string;
  hash: string;
  body: string;
}

export interface ChainFault {
  receiptId: string | null;
  seq: number;
  problem: string;
}

/**
 * Checks a run of one account's receipts, in seq order, from the receipt before it (`prior`; null = the run starts
 * the chain). Returns the first receipt that does not hold, or null: a gap or a repeat in the sequence (a row
 * deleted or inserted), a `prev` that is not the hash before, a hash that is not of its bytes (an edited byte), a
 * body that names another account or place.
 */
export function firstChainFault(
  receipts: readonly StoredReceipt[],
  prior: { seq: number; hash: string } | null,
): ChainFault | null {
  let seq = prior?.seq ?? 0;
  let prev = prior?.hash ?? GENESIS;
  for (const r of receipts) {
    const fault = (problem: string): ChainFault => ({ receiptId: r.id, seq: r.seq, problem });
    if (r.seq <= seq) return fault(`a second receipt #${r.seq} follows #${seq} (one was inserted)`);
    if (r.seq !== seq + 1)
      return { receiptId: r.id, seq: seq + 1, problem: `receipt #${seq + 1} is missing (the next one is #${r.seq})` };
    if (r.prevHash !== prev) return fault(`its prev ${r.prevHash.slice(0, 12)}... is not the hash of #${seq}`);
    if (receiptHash(r.prevHash, r.body) !== r.hash) return fault('its hash is not the hash of its bytes (edited)');
    let parsed: { account?: unknown; seq?: unknown; day?: unknown };
    try {
      parsed = JSON.parse(r.body) as typeof parsed;
    } catch {
      return fault('its body is not JSON');
    }
    if (parsed.account !== r.accountId || parsed.seq !== r.seq || parsed.day !== r.day)
      return fault('its body names another account, sequence number or day');
    seq = r.seq;
    prev = r.hash;
  }
  return null;
}
