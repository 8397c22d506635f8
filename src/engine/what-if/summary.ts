import { Decimal } from '../../domain/decimal.js';
import type { CopyDiff, CopyOutcome } from './replay.js';

export interface SideTotals {
  sent: number;
  skipped: number;
  riskLimitHits: number;
  volume: Decimal;
  profit: Decimal;
}

export interface WhatIfTotals {
  copies: number;
  changed: number;
  done: SideTotals;
  candidate: SideTotals;
  volumeDiff: Decimal;
  profitDiff: Decimal;
}

const zero = (): SideTotals => ({
  sent: 0,
  skipped: 0,
  riskLimitHits: 0,
  volume: new Decimal(0),
  profit: new Decimal(0),
});

function add(t: SideTotals, o: CopyOutcome): void {
  if (o.volume) {
    t.sent++;
    t.volume = t.volume.plus(o.volume);
  } else if (o.skipReason) t.skipped++;
  if (o.riskLimit) t.riskLimitHits++;
  if (o.profit) t.profit = t.profit.plus(o.profit);
}

/** Totals over the copies: what was done, what the candidate would do, and the difference (candidate - done). */
export function whatIfTotals(copies: readonly CopyDiff[]): WhatIfTotals {
  const done = zero();
  const candidate = zero();
  let changed = 0;
  for (const c of copies) {
    add(done, c.done);
    add(candidate, c.candidate);
    if (c.changed) changed++;
  }
  return {
    copies: copies.length,
    changed,
    done,
    candidate,
    volumeDiff: candidate.volume.minus(done.volume),
    profitDiff: candidate.profit.minus(done.profit),
  };
}
