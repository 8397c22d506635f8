import { describe, expect, it } from 'vitest';
import { PLATFORMS } from '../domain/types.js';
import { PLATFORM_NAMES, platformName } from './platform-names.js';

describe('platform names', () => {
  it('names every platform code the API has, with the broker names a trader knows', () => {
    expect(Object.keys(PLATFORM_NAMES).sort()).toEqual([...PLATFORMS].sort());
    expect(PLATFORMS.map(platformName)).toEqual(['Simulator', 'MetaTrader 4/5', 'TradeLocker', 'cTrader', 'DXtrade']);
  });

  it('shows an unknown code as it is, and no inherited property as a name', () => {
    expect(platformName('platforme')).toBe('platforme');
    expect(platformName('toString')).toBe('toString');
  });
});
