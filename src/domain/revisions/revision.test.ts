import { describe, expect, it } from 'vitest';
import { DEFAULT_RULE } from '../copy-rule.js';
import { diffSnapshots } from './revision.js';

describe('diffSnapshots', () => {
  it('names each changed field by its path, with before and after', () => {
    const before = { rule: DEFAULT_RULE, riskLimits: null };
    const after = {
      rule: { ...DEFAULT_RULE, sizing: { mode: 'multiplier', multiplier: '2' }, excludeSymbols: ['XAUUSD'] },
      riskLimits: { maxOpenVolume: '3', onBreach: null },
    };
    expect(diffSnapshots(before, after)).toEqual([
      { field: 'riskLimits.maxOpenVolume', before: null, after: '3' },
      { field: 'rule.excludeSymbols', before: [], after: ['XAUUSD'] },
      { field: 'rule.sizing.multiplier', before: '1', after: '2' },
    ]);
  });

  it('is empty for equal snapshots, whatever the key order', () => {
    expect(diffSnapshots({ a: { x: 1, y: [1] } }, { a: { y: [1], x: 1 } })).toEqual([]);
  });

  it('shows every field of a sizing whose mode changed', () => {
    expect(
      diffSnapshots({ sizing: { mode: 'multiplier', multiplier: '1' } }, { sizing: { mode: 'fixed', volume: '0.1' } }),
    ).toEqual([
      { field: 'sizing.mode', before: 'multiplier', after: 'fixed' },
      { field: 'sizing.multiplier', before: '1', after: null },
      { field: 'sizing.volume', before: null, after: '0.1' },
    ]);
  });
});
