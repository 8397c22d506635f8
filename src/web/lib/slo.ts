/**
 * Service levels for the dashboard (docs/slo.md): how each level stands against a group's target, and the target
 * form's text fields turned into the PUT body. The server judges breaches with the same rules
 * (src/domain/slo/target.ts `breachesOf`); the dashboard does not import the domain, so the few comparisons are here.
 */

export const GRADES = ['ok', 'minor', 'major', 'critical'] as const;
export type Grade = (typeof GRADES)[number];

export interface Target {
  latencyP99Ms: number | null;
  latencyP50Ms: number | null;
  successPercent: number | null;
  maxDriftGrade: Grade | null;
  maxSlippagePoints: number | null;
  windowMinutes: number;
  minCopies: number;
}

export interface Levels {
  latency: { p50Ms: number | null; p99Ms: number | null };
  slippage: { meanPoints: number | null };
  success: { attempted: number; percent: number | null };
  drift: { grade: Grade; percent: number };
}

/** met / breached against the target; unwatched: no bound set; unjudged: no sample, or fewer copies than minCopies. */
export type Verdict = 'met' | 'breached' | 'unwatched' | 'unjudged';
export type Metric = 'latency_p50' | 'latency_p99' | 'success' | 'slippage' | 'drift';

const atMost = (v: number | null, bound: number | null, enough = true): Verdict =>
  bound === null ? 'unwatched' : v === null || !enough ? 'unjudged' : v <= bound ? 'met' : 'breached';

/** Each metric's verdict, by the same rules as the evaluator (minCopies applies to latency and success only). */
export function judge(l: Levels, t: Target | null): Record<Metric, Verdict> {
  if (!t)
    return {
      latency_p50: 'unwatched',
      latency_p99: 'unwatched',
      success: 'unwatched',
      slippage: 'unwatched',
      drift: 'unwatched',
    };
  const enough = l.success.attempted >= t.minCopies;
  const pct = l.success.percent;
  return {
    latency_p50: atMost(l.latency.p50Ms, t.latencyP50Ms, enough),
    latency_p99: atMost(l.latency.p99Ms, t.latencyP99Ms, enough),
    success:
      t.successPercent === null
        ? 'unwatched'
        : pct === null || !enough
          ? 'unjudged'
          : pct >= t.successPercent
            ? 'met'
            : 'breached',
    slippage: atMost(l.slippage.meanPoints, t.maxSlippagePoints),
    drift:
      t.maxDriftGrade === null
        ? 'unwatched'
        : GRADES.indexOf(l.drift.grade) <= GRADES.indexOf(t.maxDriftGrade)
          ? 'met'
          : 'breached',
  };
}

/** The word shown beside a level: the mark is text, the colour only repeats it. */
export const VERDICT_TEXT: Record<Verdict, string> = {
  met: 'met',
  breached: 'breached',
  unwatched: 'not watched',
  unjudged: 'not judged',
};

/** The form's fields as typed: text, '' = not watched. */
export interface TargetFields {
  latencyP99Ms: string;
  latencyP50Ms: string;
  successPercent: string;
  maxDriftGrade: string;
  maxSlippagePoints: string;
  windowMinutes: string;
}

const text = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

export const targetFields = (t: Target | null): TargetFields => ({
  latencyP99Ms: text(t?.latencyP99Ms),
  latencyP50Ms: text(t?.latencyP50Ms),
  successPercent: text(t?.successPercent),
  maxDriftGrade: t?.maxDriftGrade ?? '',
  maxSlippagePoints: text(t?.maxSlippagePoints),
  windowMinutes: text(t?.windowMinutes ?? 60),
});

/**
 * The PUT body. A field left empty is sent as null (not watched); what is typed goes as a number even when it is
 * not one (NaN becomes null in JSON, so text that is not a number is sent as the text): the server's 400 says
 * which field is wrong, in its words, and the form shows it.
 */
export function targetBody(f: TargetFields, minCopies?: number): Record<string, unknown> {
  const n = (s: string): number | string | null => {
    const v = s.trim();
    if (v === '') return null;
    const x = Number(v);
    return Number.isFinite(x) ? x : v;
  };
  const window = n(f.windowMinutes);
  return {
    latencyP99Ms: n(f.latencyP99Ms),
    latencyP50Ms: n(f.latencyP50Ms),
    successPercent: n(f.successPercent),
    maxDriftGrade: f.maxDriftGrade === '' ? null : f.maxDriftGrade,
    maxSlippagePoints: n(f.maxSlippagePoints),
    ...(window === null ? {} : { windowMinutes: window }),
    ...(minCopies === undefined ? {} : { minCopies }),
  };
}
