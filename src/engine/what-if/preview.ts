import type { Account } from '../../domain/account.js';
import type { CopyRule } from '../../domain/copy-rule.js';
import type { Store } from '../../store/store.js';
import { replayWhatIf, type CopyDiff } from './replay.js';
import { whatIfTotals, type WhatIfTotals } from './summary.js';

/** The most days a preview replays, and what it replays when not told. */
export const MAX_PREVIEW_DAYS = 90;
export const DEFAULT_PREVIEW_DAYS = 30;

export interface WhatIfPreview {
  from: Date;
  to: Date;
  /** Ledger rows of the Slave in the period, the sized copies among them, and the follow-ups (closes, changes). */
  rows: number;
  followUps: number;
  copies: CopyDiff[];
  totals: WhatIfTotals;
}

/**
 * A candidate rule for a Slave, replayed over the last `days` of its ledger (docs/what-if.md). Reads only: the
 * ledger, the Masters' trades and their accounts; writes nothing.
 */
export async function previewRule(
  store: Store,
  slave: Account,
  candidate: CopyRule,
  days: number,
  now: Date,
): Promise<WhatIfPreview> {
  const from = new Date(now.getTime() - days * 86_400_000);
  const history = await store.replayHistory.read(slave.id, from);
  const masterIds = [...new Set(history.rows.map((r) => r.trade.masterAccountId))];
  const masters = new Map<string, Account>();
  for (const id of masterIds) {
    const m = await store.accounts.byId(id);
    if (m) masters.set(id, m);
  }
  const { copies, followUps } = replayWhatIf({
    slave,
    masters,
    candidate,
    rows: history.rows,
    masterTrades: history.masterTrades,
  });
  return { from, to: now, rows: history.rows.length, followUps, copies, totals: whatIfTotals(copies) };
}
