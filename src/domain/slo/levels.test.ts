import { describe, expect, it } from 'vitest';
import { dec } from '../decimal.js';
import { gradeOf, levelsOf, percentile, type SloRow } from './levels.js';
import { breachesOf, NO_TARGET, parseTarget } from './target.js';

const T0 = Date.parse('2026-03-02T10:00:00Z');
const row = (o: Partial<SloRow> & { latencyMs?: number } = {}): SloRow => ({
  slaveAccountId: 'acc_s',
  action: 'open',
  symbol: 'EURUSD',
  state: 'confirmed',
  skipReason: null,
  plannedVolume: dec('1'),
  filledVolume: dec('1'),
  fillPrice: dec('1.1'),
  slippage: dec('0.00002'),
  contractSize: dec('100000'),
  tickSize: dec('0.00001'),
  masterAt: new Date(T0),
  answeredAt: new Date(T0 + (o.latencyMs ?? 100)),
  createdAt: new Date(T0 + 10),
  currency: 'USD',
  ...o,
});

describe('service levels from ledger rows', () => {
  it('percentile is nearest-rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it('latency runs from the Master deal to the answer; slippage in points and account money', () => {
    const rows = [...Array.from({ length: 99 }, () => row({ latencyMs: 200 })), row({ latencyMs: 3000 })];
    const l = levelsOf(rows);
    expect(l.latency).toMatchObject({ samples: 100, p50Ms: 200, p99Ms: 200, maxMs: 3000 });
    expect(levelsOf([...rows, row({ latencyMs: 3000 })]).latency.p99Ms).toBe(3000);
    // 0.00002 = 2 points; 1 lot x 100,000 x 0.00002 = 2 USD per copy.
    expect(l.slippage.meanPoints).toBe(2);
    expect(l.slippage.totalAccount).toBe(200);
  });

  it('success counts failures and service skips, not rule skips, denials or heal rows', () => {
    const l = levelsOf([
      row(),
      row(),
      row({ state: 'rejected' }),
      row({ state: 'skipped', skipReason: 'stale_action: action is 9000 ms old' }),
      row({ state: 'skipped', skipReason: 'symbol_excluded: not in the list' }),
      row({ state: 'denied', skipReason: 'risk_max_open_volume: x' }),
      row({ state: 'planned' }),
      row({ action: 'heal_open', state: 'rejected' }),
    ]);
    expect(l.success).toEqual({ attempted: 4, filled: 2, failed: 2, skippedByRule: 2, inFlight: 1, percent: 50 });
    expect(l.copies).toBe(7);
  });

  it('drift is the share of the planned notional not filled, graded', () => {
    expect(levelsOf([row()]).drift).toMatchObject({ percent: 0, grade: 'ok' });
    const half = levelsOf([row({ filledVolume: dec('0.5') }), row()]).drift;
    expect(half.percent).toBe(25);
    expect(half.grade).toBe('critical');
    expect(half.missingNotional).toBe(55000);
    expect([0.5, 1, 3, 10, 30].map(gradeOf)).toEqual(['ok', 'ok', 'minor', 'major', 'critical']);
  });
});

describe('targets', () => {
  it('refuses what cannot be a target, in words', () => {
    expect(() => parseTarget({ latencyP99Ms: -1 })).toThrow(/latencyP99Ms must be more than 0/);
    expect(() => parseTarget({ latencyP99Ms: Number.NaN })).toThrow(/finite number/);
    expect(() => parseTarget({ successPercent: 100.5 })).toThrow(/at most 100/);
    expect(() => parseTarget({ maxDriftGrade: 'tiny' })).toThrow(/one of ok, minor, major, critical/);
    expect(() => parseTarget({ windowMinutes: 2.5 })).toThrow(/whole number/);
    expect(() => parseTarget({ latencyP50Ms: 3000, latencyP99Ms: 2000 })).toThrow(/not be more than/);
    expect(parseTarget({ successPercent: 99 })).toEqual({ ...NO_TARGET, successPercent: 99 });
  });

  it('names each metric the levels break', () => {
    const t = parseTarget({ latencyP99Ms: 2000, successPercent: 99, maxDriftGrade: 'minor', maxSlippagePoints: 5 });
    expect(breachesOf(levelsOf([row()]), t)).toEqual([]);
    const bad = levelsOf([
      row({ latencyMs: 2500, filledVolume: dec('0.5'), slippage: dec('0.0001') }),
      row({ state: 'rejected' }),
    ]);
    expect(breachesOf(bad, t).map((b) => b.metric)).toEqual(['latency_p99', 'success', 'drift', 'slippage']);
    // Too few copies to judge latency and success; drift and slippage are judged on what there is.
    expect(breachesOf(bad, { ...t, minCopies: 3 }).map((b) => b.metric)).toEqual(['drift', 'slippage']);
  });
});
