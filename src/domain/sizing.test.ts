import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from './decimal.js';
import { withDefaults } from './copy-rule.js';
import { mapSymbol, sizeVolume } from './sizing.js';
import type { InstrumentSpec } from './types.js';

const spec: InstrumentSpec = { symbol: 'EURUSD', volumeStep: new Decimal('0.01'), minVolume: new Decimal('0.01'), maxVolume: new Decimal('100'), contractSize: new Decimal(100000), tickSize: new Decimal('0.00001') };
const lots = fc.integer({ min: 1, max: 100_00 }).map((n) => new Decimal(n).div(100));
const mult = fc.integer({ min: 1, max: 1000 }).map((n) => new Decimal(n).div(100));

describe('sizeVolume', () => {
  it('never exceeds multiplier x master volume, is always on the step and inside the broker limits', () => {
    fc.assert(fc.property(lots, mult, (v, m) => {
      const r = sizeVolume(withDefaults({ sizing: { mode: 'multiplier', multiplier: m.toString() } }), { masterVolume: v }, spec);
      if (!r.ok) return v.mul(m).lt('0.01') && r.reason === 'volume_below_minimum';
      const target = Decimal.min(v.mul(m), 100);
      return r.volume.lte(target) && r.volume.mod('0.01').isZero() && r.volume.gte('0.01') && target.minus(r.volume).lt('0.01');
    }));
  });

  it('balance ratio scales by slave/master balance', () => {
    const r = sizeVolume(withDefaults({ sizing: { mode: 'balance_ratio' } }), { masterVolume: new Decimal('1'), masterBalance: new Decimal(10000), slaveBalance: new Decimal(2500) }, spec);
    expect(r).toEqual({ ok: true, volume: new Decimal('0.25') });
    const missing = sizeVolume(withDefaults({ sizing: { mode: 'equity_ratio' } }), { masterVolume: new Decimal('1') }, spec);
    expect(missing).toMatchObject({ ok: false, reason: 'missing_account_data' });
  });

  it('fixed volume ignores the master volume; max caps; a rule minimum lifts small copies', () => {
    expect(sizeVolume(withDefaults({ sizing: { mode: 'fixed', volume: '0.07' } }), { masterVolume: new Decimal(5) }, spec)).toEqual({ ok: true, volume: new Decimal('0.07') });
    expect(sizeVolume(withDefaults({ maxVolume: '0.5' }), { masterVolume: new Decimal(3) }, spec)).toEqual({ ok: true, volume: new Decimal('0.5') });
    expect(sizeVolume(withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.1' }, minVolume: '0.02' }), { masterVolume: new Decimal('0.05') }, spec)).toEqual({ ok: true, volume: new Decimal('0.02') });
    expect(sizeVolume(withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.1' } }), { masterVolume: new Decimal('0.05') }, spec)).toMatchObject({ ok: false, reason: 'volume_below_minimum' });
  });
});

describe('mapSymbol', () => {
  it('maps suffixes and honours include/exclude lists', () => {
    expect(mapSymbol(withDefaults({ symbolMap: { EURUSD: 'EURUSD.m' } }), 'EURUSD')).toEqual({ ok: true, symbol: 'EURUSD.m' });
    expect(mapSymbol(withDefaults({ excludeSymbols: ['XAUUSD'] }), 'XAUUSD')).toMatchObject({ ok: false, reason: 'symbol_excluded' });
    expect(mapSymbol(withDefaults({ includeSymbols: ['EURUSD'] }), 'GBPUSD')).toMatchObject({ ok: false, reason: 'symbol_not_included' });
  });
});
