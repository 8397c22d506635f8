import { describe, expect, it } from 'vitest';
import { judge, targetBody, targetFields, type Levels, type Target } from './slo';

const levels = (
  o: Partial<{
    p50: number | null;
    p99: number | null;
    pct: number | null;
    attempted: number;
    slip: number | null;
    grade: Levels['drift']['grade'];
  }> = {},
): Levels => ({
  latency: { p50Ms: o.p50 ?? 100, p99Ms: o.p99 === undefined ? 900 : o.p99 },
  slippage: { meanPoints: o.slip === undefined ? 0.5 : o.slip },
  success: { attempted: o.attempted ?? 10, percent: o.pct === undefined ? 100 : o.pct },
  drift: { grade: o.grade ?? 'ok', percent: 0 },
});
const target: Target = {
  latencyP99Ms: 1000,
  latencyP50Ms: 200,
  successPercent: 99,
  maxDriftGrade: 'minor',
  maxSlippagePoints: 1,
  windowMinutes: 60,
  minCopies: 3,
};

describe('service levels against a target', () => {
  it('marks each level met, or breached when it passes the bound (a bound is inclusive)', () => {
    expect(judge(levels({ p99: 1000 }), target)).toEqual({
      latency_p50: 'met',
      latency_p99: 'met',
      success: 'met',
      slippage: 'met',
      drift: 'met',
    });
    expect(judge(levels({ p99: 1001, p50: 201, pct: 98.9, slip: 1.5, grade: 'major' }), target)).toEqual({
      latency_p50: 'breached',
      latency_p99: 'breached',
      success: 'breached',
      slippage: 'breached',
      drift: 'breached',
    });
  });
  it('does not judge latency and success below minCopies or without samples; drift and slippage still are', () => {
    const v = judge(levels({ attempted: 2, p99: 5000, pct: 0, slip: 3, grade: 'critical' }), target);
    expect(v).toMatchObject({ latency_p99: 'unjudged', success: 'unjudged', slippage: 'breached', drift: 'breached' });
    expect(judge(levels({ p99: null, slip: null }), target)).toMatchObject({
      latency_p99: 'unjudged',
      slippage: 'unjudged',
    });
  });
  it('a field without a bound, or no target at all, is not watched', () => {
    expect(judge(levels(), { ...target, latencyP99Ms: null, maxDriftGrade: null })).toMatchObject({
      latency_p99: 'unwatched',
      drift: 'unwatched',
    });
    expect(Object.values(judge(levels(), null))).toEqual(Array(5).fill('unwatched'));
  });
  it('the form round-trips a target; empty fields go as null and text that is not a number as itself', () => {
    expect(targetBody(targetFields(target), target.minCopies)).toEqual({ ...target });
    const f = { ...targetFields(null), latencyP99Ms: ' 2000 ', successPercent: 'abc', windowMinutes: '' };
    expect(targetBody(f)).toEqual({
      latencyP99Ms: 2000,
      latencyP50Ms: null,
      successPercent: 'abc',
      maxDriftGrade: null,
      maxSlippagePoints: null,
    });
  });
});
