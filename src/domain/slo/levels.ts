import { Decimal } from '../decimal.js';
import { quoteToAccount } from '../quote-currency.js';

/**
 * Service levels of copies, from the copy ledger (docs/slo.md): latency from the Master's deal to the Slave
 * broker's answer, slippage, the copy success ratio and drift graded by notional. Pure: the store reads the rows,
 * the evaluator and the routes call these.
 */

/** One ledger row as the levels read it: the copy intent, its trade's Master time and the symbol's spec. */
export interface SloRow {
  slaveAccountId: string;
  action: string;
  symbol: string;
  state: string;
  skipReason: string | null;
  plannedVolume: Decimal | null;
  filledVolume: Decimal | null;
  fillPrice: Decimal | null;
  /** Price units, positive = worse for the Slave than the Master's fill (outcome-ledger.ts). */
  slippage: Decimal | null;
  /** The Slave broker's spec of the symbol as the sizing recorded it; null when no sizing decided the row. */
  contractSize: Decimal | null;
  tickSize: Decimal | null;
  /** When the Master's deal happened at its broker (trades.action_at). */
  masterAt: Date | null;
  /** When the Slave broker's answer was written to the ledger (copy_intents.updated_at, our clock). */
  answeredAt: Date;
  createdAt: Date;
  /** The Slave account's currency, for slippage and drift in account money. */
  currency: string | null;
}

export const DRIFT_GRADES = ['ok', 'minor', 'major', 'critical'] as const;
export type DriftGrade = (typeof DRIFT_GRADES)[number];
/** The upper bound (inclusive) of each grade's share of missing notional; above `major`'s, critical. */
export const DRIFT_BOUNDS = { ok: 0.01, minor: 0.05, major: 0.2 } as const;

/**
 * Skips that are the service's failure, not a rule's choice: the copy came too late, or the Slave's broker could
 * not be reached. Every other skip (filters, sizing below the minimum, an unlisted symbol, a paused Slave) and a
 * risk guard's denial is the user's rule working: neither attempted nor failed.
 */
export const FAILURE_SKIPS: ReadonlySet<string> = new Set(['stale_action', 'broker_unavailable']);
/** Rows the reconciler wrote to repair drift: not copies of a Master deal (their Master time may be long past). */
const isHeal = (action: string) => action.startsWith('heal_');
/** Actions whose fill adds the copied exposure: a short fill there is drift. */
const FILLS_EXPOSURE: ReadonlySet<string> = new Set(['open', 'increase', 'open_on_fill', 'order_filled']);

export interface Levels {
  copies: number;
  latency: { samples: number; p50Ms: number | null; p99Ms: number | null; maxMs: number | null };
  slippage: {
    samples: number;
    /** Mean, in points (the symbol's tick size); only rows whose spec is known. */
    meanPoints: number | null;
    /** Sum over the copies in the Slave's account currency (positive = cost). */
    totalAccount: number | null;
  };
  success: {
    attempted: number;
    filled: number;
    failed: number;
    /** Skipped by a rule or denied by the risk guard: not counted either way. */
    skippedByRule: number;
    inFlight: number;
    /** filled / attempted in percent; null when nothing was attempted. */
    percent: number | null;
  };
  drift: {
    /** Notional (account currency) planned for the fills that add exposure, and what was not filled of it. */
    plannedNotional: number;
    missingNotional: number;
    /** missing / planned in percent; 0 when nothing was planned. */
    percent: number;
    grade: DriftGrade;
  };
}

/** The nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function gradeOf(sharePercent: number): DriftGrade {
  const share = sharePercent / 100;
  if (share <= DRIFT_BOUNDS.ok) return 'ok';
  if (share <= DRIFT_BOUNDS.minor) return 'minor';
  if (share <= DRIFT_BOUNDS.major) return 'major';
  return 'critical';
}

export const gradeRank = (g: DriftGrade): number => DRIFT_GRADES.indexOf(g);

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;
const skipCode = (r: SloRow) => (r.skipReason ?? '').split(':')[0]!.trim();

/** The levels of a set of ledger rows (one Slave's, or a whole group's). */
export function levelsOf(rows: readonly SloRow[]): Levels {
  const copies = rows.filter((r) => !isHeal(r.action));
  return {
    copies: copies.length,
    latency: latencyOf(copies),
    slippage: slippageOf(copies),
    success: successOf(copies),
    drift: driftOf(copies),
  };
}

function latencyOf(rows: readonly SloRow[]): Levels['latency'] {
  const ms = rows
    .filter((r) => (r.state === 'confirmed' || r.state === 'rejected') && r.masterAt)
    .map((r) => Math.max(0, r.answeredAt.getTime() - r.masterAt!.getTime()))
    .sort((a, b) => a - b);
  return {
    samples: ms.length,
    p50Ms: percentile(ms, 50),
    p99Ms: percentile(ms, 99),
    maxMs: ms.length ? ms[ms.length - 1]! : null,
  };
}

function slippageOf(rows: readonly SloRow[]): Levels['slippage'] {
  const withSlip = rows.filter((r) => r.state === 'confirmed' && r.slippage !== null);
  const points = withSlip.filter((r) => r.tickSize?.gt(0)).map((r) => r.slippage!.div(r.tickSize!).toNumber());
  const money = withSlip
    .filter((r) => r.contractSize && r.fillPrice)
    .map((r) =>
      r
        .slippage!.mul(r.filledVolume ?? r.plannedVolume ?? 0)
        .mul(r.contractSize!)
        .mul(quoteToAccount(r.symbol, r.currency, r.fillPrice))
        .toNumber(),
    );
  return {
    samples: withSlip.length,
    meanPoints: points.length ? round(points.reduce((a, b) => a + b, 0) / points.length, 2) : null,
    totalAccount: money.length
      ? round(
          money.reduce((a, b) => a + b, 0),
          2,
        )
      : null,
  };
}

function successOf(rows: readonly SloRow[]): Levels['success'] {
  let filled = 0;
  let failed = 0;
  let skippedByRule = 0;
  let inFlight = 0;
  for (const r of rows) {
    if (r.state === 'confirmed') filled++;
    else if (r.state === 'rejected' || r.state === 'unresolved') failed++;
    else if (r.state === 'skipped' && FAILURE_SKIPS.has(skipCode(r))) failed++;
    else if (r.state === 'skipped' || r.state === 'denied') skippedByRule++;
    else inFlight++;
  }
  const attempted = filled + failed;
  return {
    attempted,
    filled,
    failed,
    skippedByRule,
    inFlight,
    percent: attempted > 0 ? round((100 * filled) / attempted, 2) : null,
  };
}

function driftOf(rows: readonly SloRow[]): Levels['drift'] {
  let planned = new Decimal(0);
  let missing = new Decimal(0);
  for (const r of rows) {
    if (r.state !== 'confirmed' || !FILLS_EXPOSURE.has(r.action) || !r.plannedVolume || !r.fillPrice) continue;
    // Without the spec a lot counts as one unit: the share stays right within the row, only the money is off.
    const perLot = r.fillPrice.mul(r.contractSize ?? 1).mul(quoteToAccount(r.symbol, r.currency, r.fillPrice));
    const filled = r.filledVolume ?? r.plannedVolume;
    planned = planned.plus(r.plannedVolume.mul(perLot));
    missing = missing.plus(r.plannedVolume.minus(filled).abs().mul(perLot));
  }
  const percent = planned.gt(0) ? round(missing.div(planned).mul(100).toNumber(), 4) : 0;
  return {
    plannedNotional: round(planned.toNumber(), 2),
    missingNotional: round(missing.toNumber(), 2),
    percent,
    grade: gradeOf(percent),
  };
}
