import { invalid } from '../errors.js';
import { DRIFT_GRADES, gradeRank, type DriftGrade, type Levels } from './levels.js';

/**
 * A copier group's service-level target: what every Slave of the group must meet over a rolling window. A
 * field left null is not watched. docs/slo.md.
 */
export interface SloTarget {
  /** p99 of Master deal -> Slave broker answer, at most this many ms. */
  latencyP99Ms: number | null;
  latencyP50Ms: number | null;
  /** filled / attempted, at least this percent (0..100). */
  successPercent: number | null;
  /** The worst drift grade allowed (ok, minor, major); critical means drift is not watched. */
  maxDriftGrade: DriftGrade | null;
  /** Mean slippage, at most this many points. */
  maxSlippagePoints: number | null;
  /** The rolling window the levels are measured over, in minutes. */
  windowMinutes: number;
  /** Fewer attempted copies than this in the window: latency and success are not judged (too few to say). */
  minCopies: number;
}

export const SLO_METRICS = ['latency_p99', 'latency_p50', 'success', 'drift', 'slippage'] as const;
export type SloMetric = (typeof SLO_METRICS)[number];

export const WINDOW_MINUTES = { min: 1, max: 1440, default: 60 } as const;
export const NO_TARGET: SloTarget = {
  latencyP99Ms: null,
  latencyP50Ms: null,
  successPercent: null,
  maxDriftGrade: null,
  maxSlippagePoints: null,
  windowMinutes: WINDOW_MINUTES.default,
  minCopies: 1,
};

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * A target from input that may come from anywhere (the API validates its shape first; this says what is wrong in
 * words: a negative latency, NaN, a success over 100 %). Fields absent stay unwatched.
 */
export function parseTarget(input: Record<string, unknown>): SloTarget {
  const t: SloTarget = { ...NO_TARGET };
  const num = (k: keyof SloTarget, o: { min: number; max?: number; integer?: boolean; exclusiveMin?: boolean }) => {
    const v = input[k];
    if (v === undefined || v === null) return;
    if (!finite(v)) throw invalid(`${k} must be a finite number`, { field: k });
    if (o.exclusiveMin ? v <= o.min : v < o.min)
      throw invalid(`${k} must be ${o.exclusiveMin ? 'more than' : 'at least'} ${o.min}`, { field: k });
    if (o.max !== undefined && v > o.max) throw invalid(`${k} must be at most ${o.max}`, { field: k });
    if (o.integer && !Number.isInteger(v)) throw invalid(`${k} must be a whole number`, { field: k });
    (t as unknown as Record<string, number>)[k] = v;
  };
  num('latencyP99Ms', { min: 0, exclusiveMin: true });
  num('latencyP50Ms', { min: 0, exclusiveMin: true });
  num('successPercent', { min: 0, max: 100 });
  num('maxSlippagePoints', { min: 0 });
  num('windowMinutes', { min: WINDOW_MINUTES.min, max: WINDOW_MINUTES.max, integer: true });
  num('minCopies', { min: 1, max: 100_000, integer: true });
  const g = input.maxDriftGrade;
  if (g !== undefined && g !== null) {
    if (typeof g !== 'string' || !(DRIFT_GRADES as readonly string[]).includes(g))
      throw invalid(`maxDriftGrade must be one of ${DRIFT_GRADES.join(', ')}`, { field: 'maxDriftGrade' });
    t.maxDriftGrade = g as DriftGrade;
  }
  if (t.latencyP50Ms !== null && t.latencyP99Ms !== null && t.latencyP50Ms > t.latencyP99Ms)
    throw invalid('latencyP50Ms must not be more than latencyP99Ms', { field: 'latencyP50Ms' });
  return t;
}

/** A stored target (JSON) read back; fields it lacks take NO_TARGET's. */
export const targetOf = (stored: unknown): SloTarget => ({ ...NO_TARGET, ...(stored as Partial<SloTarget>) });

export const watchesAnything = (t: SloTarget): boolean =>
  t.latencyP99Ms !== null ||
  t.latencyP50Ms !== null ||
  t.successPercent !== null ||
  t.maxDriftGrade !== null ||
  t.maxSlippagePoints !== null;

export interface Breach {
  metric: SloMetric;
  /** The measured level, as a number (ms, percent, points) or a drift grade. */
  value: number | string;
  target: number | string;
  detail: string;
}

/** What of the target the levels break; empty when they meet it (or there are too few copies to judge). */
export function breachesOf(levels: Levels, t: SloTarget): Breach[] {
  const out: Breach[] = [];
  const enough = levels.success.attempted >= t.minCopies;
  const { p99Ms, p50Ms } = levels.latency;
  if (enough && t.latencyP99Ms !== null && p99Ms !== null && p99Ms > t.latencyP99Ms)
    out.push(over('latency_p99', p99Ms, t.latencyP99Ms, 'ms'));
  if (enough && t.latencyP50Ms !== null && p50Ms !== null && p50Ms > t.latencyP50Ms)
    out.push(over('latency_p50', p50Ms, t.latencyP50Ms, 'ms'));
  const pct = levels.success.percent;
  if (enough && t.successPercent !== null && pct !== null && pct < t.successPercent)
    out.push({
      metric: 'success',
      value: pct,
      target: t.successPercent,
      detail: `${levels.success.filled} of ${levels.success.attempted} copies filled (${pct} %), target at least ${t.successPercent} %`,
    });
  const grade = levels.drift.grade;
  if (t.maxDriftGrade !== null && gradeRank(grade) > gradeRank(t.maxDriftGrade))
    out.push({
      metric: 'drift',
      value: grade,
      target: t.maxDriftGrade,
      detail: `drift ${grade}: ${levels.drift.percent} % of the planned notional not filled, target at most ${t.maxDriftGrade}`,
    });
  const slip = levels.slippage.meanPoints;
  if (t.maxSlippagePoints !== null && slip !== null && slip > t.maxSlippagePoints)
    out.push(over('slippage', slip, t.maxSlippagePoints, 'points'));
  return out;
}

function over(metric: SloMetric, value: number, target: number, unit: string): Breach {
  const what = metric === 'slippage' ? 'mean slippage' : metric.replace('latency_', 'latency ');
  return { metric, value, target, detail: `${what} ${value} ${unit}, target at most ${target} ${unit}` };
}
