import { describe, expect, it } from 'vitest';
import type { Capabilities } from './capabilities.js';
import { filterProblems, filterTrade, filtersNothing, type TradeFilters } from './trade-filters.js';

const none: TradeFilters = {
  sides: 'both',
  includeMagic: [],
  excludeMagic: [],
  includeComments: [],
  excludeComments: [],
};
const caps = (has: Partial<Capabilities['has']>) => ({ platform: 'ctrader', has }) as unknown as Capabilities;

describe('trade filters', () => {
  it('no filter copies everything and takes the fast path', () => {
    expect(filtersNothing(none)).toBe(true);
    expect(filterTrade(none, { side: 'sell', magic: 5, comment: 'x' })).toBeNull();
    expect(filtersNothing({ ...none, sides: 'buy' })).toBe(false);
    expect(filtersNothing({ ...none, excludeComments: ['x'] })).toBe(false);
  });

  it('buy-only and sell-only read the Master side', () => {
    expect(filterTrade({ ...none, sides: 'buy' }, { side: 'sell' })).toEqual({
      reason: 'side_filtered',
      detail: "the Master's trade is a sell; the rule copies buys only",
    });
    expect(filterTrade({ ...none, sides: 'buy' }, { side: 'buy' })).toBeNull();
    expect(filterTrade({ ...none, sides: 'sell' }, { side: 'buy' })?.reason).toBe('side_filtered');
  });

  it('magic numbers: exclude, include, and a trade without one is in no include list', () => {
    const inc = { ...none, includeMagic: [1001, 2002] };
    expect(filterTrade(inc, { side: 'buy', magic: 2002 })).toBeNull();
    expect(filterTrade(inc, { side: 'buy', magic: 7 })).toEqual({
      reason: 'magic_not_included',
      detail: "magic number 7 is not in the rule's includeMagic",
    });
    expect(filterTrade(inc, { side: 'buy', magic: null })?.detail).toMatch(/carries no magic number/);
    const exc = { ...none, excludeMagic: [0] };
    expect(filterTrade(exc, { side: 'buy', magic: 0 })?.reason).toBe('magic_excluded');
    expect(filterTrade(exc, { side: 'buy', magic: 1 })).toBeNull();
    expect(filterTrade(exc, { side: 'buy' })).toBeNull();
  });

  it('comments: a part of it, case aside; exclude before include', () => {
    const r = { ...none, includeComments: ['grid'], excludeComments: ['News'] };
    expect(filterTrade(r, { side: 'buy', comment: 'Grid EA v2' })).toBeNull();
    expect(filterTrade(r, { side: 'buy', comment: 'grid on news' })).toEqual({
      reason: 'comment_excluded',
      detail: 'the comment "grid on news" contains "News"',
    });
    expect(filterTrade(r, { side: 'buy', comment: 'scalper' })?.reason).toBe('comment_not_included');
    expect(filterTrade(r, { side: 'buy', comment: null })?.detail).toMatch(/carries no comment/);
  });

  it('problems name the field; a Master platform without magic or comments refuses those filters', () => {
    expect(filterProblems({ ...none, includeMagic: [-1] }, null)).toEqual([
      'includeMagic must hold non-negative integers, got -1',
    ]);
    expect(filterProblems({ ...none, includeMagic: [3], excludeMagic: [3] }, null)).toEqual([
      'magic number 3 is both in includeMagic and excludeMagic',
    ]);
    expect(filterProblems({ ...none, excludeComments: [' '] }, null)[0]).toMatch(/^excludeComments must hold/);
    expect(filterProblems({ ...none, sides: 'long' as never }, null)).toEqual(['sides must be one of both, buy, sell']);
    expect(filterProblems({ ...none, excludeMagic: [1], includeComments: ['a'] }, caps({}))).toEqual([
      "excludeMagic is set, but the Master's platform ctrader carries no magic number",
      "includeComments is set, but the Master's platform ctrader carries no trade comment",
    ]);
    expect(
      filterProblems(
        { ...none, includeMagic: [1], excludeComments: ['a'] },
        caps({ magicNumber: true, orderComment: true }),
      ),
    ).toEqual([]);
  });
});
