import { firstChainFault, headMessage, receiptBody, type ChainFault } from '../domain/receipts/chain.js';
import { resize } from '../domain/receipts/sizing-record.js';
import type { ReceiptHead, ReceiptRow, ReceiptsRepo } from '../store/repos/receipts.js';
import { verifyHead, type ReceiptPublicKey } from './receipt-key.js';

export interface AccountVerdict {
  accountId: string;
  receipts: number;
  days: string[];
  /** The first receipt that does not hold (null = every one does). */
  fault: ChainFault | null;
  /** Ended ledger rows older than the grace without a receipt yet (not a failure: the sealer appends them). */
  unsealed: number;
}

export interface VerifyRange {
  fromDay?: string;
  toDay?: string;
}

const PAGE = 1000;

/** Names the first top-level part of two receipt bodies that differs (what an edit of the ledger changed). */
function differingPart(stored: string, now: string): string {
  try {
    const a = JSON.parse(stored) as Record<string, Record<string, unknown> | null>;
    const b = JSON.parse(now) as Record<string, Record<string, unknown> | null>;
    for (const k of Object.keys(a)) {
      if (JSON.stringify(a[k]) === JSON.stringify(b[k])) continue;
      const inner = a[k] && typeof a[k] === 'object' ? a[k] : {};
      const field = Object.keys(inner ?? {}).find((f) => JSON.stringify(inner?.[f]) !== JSON.stringify(b[k]?.[f]));
      return field ? `${k}.${field}` : k;
    }
  } catch {
    // a body that is not JSON is named by the chain check already
  }
  return 'body';
}

/** The receipt against the ledger row it names, as that row is now, and the sizing run again from its inputs. */
function ledgerFault(r: ReceiptRow, ledger: Awaited<ReturnType<ReceiptsRepo['ledgerOf']>>): string | null {
  const intent = ledger.intents.get(r.intentId);
  if (!intent) return `its ledger row ${r.intentId} is gone from the store`;
  const now = receiptBody(
    { account: r.accountId, seq: r.seq, day: r.day },
    intent,
    ledger.trades.get(intent.tradeId) ?? null,
  );
  if (now !== r.body)
    return `its ledger row ${r.intentId} no longer matches it (${differingPart(r.body, now)} differs)`;
  const body = JSON.parse(r.body) as { sizing: unknown; request: { plannedVolume: string | null } };
  if (body.sizing) {
    const wrong = resize(body.sizing, body.request.plannedVolume);
    if (wrong) return `its sizing does not come out: ${wrong}`;
  }
  return null;
}

/** The day's signed head: present, signed by a known key, and naming the day's last receipt. */
function headFault(head: ReceiptHead | undefined, last: ReceiptRow, keys: readonly ReceiptPublicKey[]): string | null {
  if (!head) return `the head of ${last.day} is missing`;
  const msg = headMessage({
    account: head.accountId,
    day: head.day,
    seq: head.seq,
    hash: head.hash,
    keyId: head.keyId,
  });
  const sig = verifyHead(keys, head.keyId, msg, head.signature);
  if (sig === 'unknown_key')
    return `the head of ${last.day} is signed by key ${head.keyId}, which this key file does not hold`;
  if (sig === 'bad_signature') return `the signature of the head of ${last.day} does not verify (the head was edited)`;
  if (head.seq !== last.seq || head.hash !== last.hash)
    return `the signed head of ${last.day} names receipt #${head.seq}, the day's last receipt is #${last.seq}`;
  return null;
}

/**
 * Verifies one account's chain over a range of days: every receipt links to the one before and hashes to its own
 * bytes, matches its ledger row as the row is now, and its sizing comes out again; every day's head is signed by a
 * known key and names that day's last receipt; a chain read to its end stops where the chain row says it does.
 */
export async function verifyAccount(
  repo: ReceiptsRepo,
  keys: readonly ReceiptPublicKey[],
  accountId: string,
  range: VerifyRange = {},
  graceMs = 60_000,
): Promise<AccountVerdict> {
  const heads = new Map((await repo.heads(accountId, range.fromDay, range.toDay)).map((h) => [h.day, h]));
  const days: string[] = [];
  let count = 0;
  let fault: ChainFault | null = null;
  let prior: { seq: number; hash: string } | null = null;
  let first = true;
  let dayLast: ReceiptRow | null = null;
  let afterSeq = 0;
  const closeDay = (next: ReceiptRow | null): ChainFault | null => {
    if (!dayLast || (next && next.day === dayLast.day)) return null;
    days.push(dayLast.day);
    const wrong = headFault(heads.get(dayLast.day), dayLast, keys);
    return wrong ? { receiptId: dayLast.id, seq: dayLast.seq, problem: wrong } : null;
  };
  for (;;) {
    const page = await repo.page(accountId, { afterSeq, limit: PAGE, ...range });
    if (first && page[0] && page[0].seq > 1) {
      const before = await repo.at(accountId, page[0].seq - 1);
      prior = before ? { seq: before.seq, hash: before.hash } : { seq: page[0].seq - 1, hash: '(missing)' };
      if (!before) {
        fault = { receiptId: null, seq: page[0].seq - 1, problem: `receipt #${page[0].seq - 1} is missing` };
        break;
      }
    }
    first = false;
    if (page.length === 0) break;
    const chain = firstChainFault(page, prior);
    const ledger = await repo.ledgerOf(page.map((r) => r.intentId));
    for (const r of page) {
      if (chain && chain.seq <= r.seq) {
        fault = chain;
        break;
      }
      const wrong = ledgerFault(r, ledger);
      fault = wrong ? { receiptId: r.id, seq: r.seq, problem: wrong } : closeDay(r);
      if (fault) break;
      dayLast = r;
      count++;
    }
    if (fault) break;
    if (chain) {
      fault = chain;
      break;
    }
    const last = page[page.length - 1]!;
    prior = { seq: last.seq, hash: last.hash };
    afterSeq = last.seq;
    if (page.length < PAGE) break;
  }
  fault ??= closeDay(null);
  if (!fault && !range.toDay) {
    const end = await repo.chainEnd(accountId);
    const lastSeq = prior?.seq ?? 0;
    if (end && end.seq !== lastSeq)
      fault = {
        receiptId: null,
        seq: lastSeq + 1,
        problem: `the chain ends at #${lastSeq}, its record says #${end.seq}`,
      };
  }
  return { accountId, receipts: count, days, fault, unsealed: await repo.unsealedCount(accountId, graceMs) };
}
