import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from './decimal.js';
import { validateRule, withDefaults } from './copy-rule.js';
import { SIM_CAPABILITIES } from '../platforms/sim/capabilities.js';
import { mapSymbol, sizeVolume } from './sizing.js';
import type { InstrumentSpec } from './types.js';

const spec: InstrumentSpec = {
  symbol: 'EURUSD',
  volumeStep: new Decimal('0.01'),
  minVolume: new Decimal('0.01'),
  maxVolume: new Decimal('100'),
  contractSize: new Decimal(100000),
  tickSize: new Decimal('0.00001'),
};
const lots = fc.integer({ min: 1, max: 100_00 }).map((n) => new Decimal(n).div(100));
const mult = fc.integer({ min: 1, max: 1000 }).map((n) => new Decimal(n).div(100));

describe('sizeVolume', () => {
  it('never exceeds multiplier x master volume, is always on the step and inside the broker limits', () => {
    fc.assert(
      fc.property(lots, mult, (v, m) => {
        const r = sizeVolume(
          withDefaults({ sizing: { mode: 'multiplier', multiplier: m.toString() } }),
          { masterVolume: v },
          spec,
        );
        if (!r.ok) return v.mul(m).lt('0.01') && r.reason === 'volume_below_minimum';
        const target = Decimal.min(v.mul(m), 100);
        return (
          r.volume.lte(target) &&
          r.volume.mod('0.01').isZero() &&
          r.volume.gte('0.01') &&
          target.minus(r.volume).lt('0.01')
        );
      }),
    );
  });

  it('balance ratio scales by slave/master balance', () => {
    const r = sizeVolume(
      withDefaults({ sizing: { mode: 'balance_ratio' } }),
      { masterVolume: new Decimal('1'), masterBalance: new Decimal(10000), slaveBalance: new Decimal(2500) },
      spec,
    );
    expect(r).toEqual({ ok: true, volume: new Decimal('0.25') });
    const missing = sizeVolume(
      withDefaults({ sizing: { mode: 'equity_ratio' } }),
      { masterVolume: new Decimal('1') },
      spec,
    );
    expect(missing).toMatchObject({ ok: false, reason: 'missing_account_data' });
  });

  it('fixed volume ignores the master volume; max caps; a rule minimum lifts small copies', () => {
    expect(
      sizeVolume(withDefaults({ sizing: { mode: 'fixed', volume: '0.07' } }), { masterVolume: new Decimal(5) }, spec),
    ).toEqual({ ok: true, volume: new Decimal('0.07') });
    expect(sizeVolume(withDefaults({ maxVolume: '0.5' }), { masterVolume: new Decimal(3) }, spec)).toEqual({
      ok: true,
      volume: new Decimal('0.5'),
    });
    expect(
      sizeVolume(
        withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.1' }, minVolume: '0.02' }),
        { masterVolume: new Decimal('0.05') },
        spec,
      ),
    ).toEqual({ ok: true, volume: new Decimal('0.02') });
    expect(
      sizeVolume(
        withDefaults({ sizing: { mode: 'multiplier', multiplier: '0.1' } }),
        { masterVolume: new Decimal('0.05') },
        spec,
      ),
    ).toMatchObject({ ok: false, reason: 'volume_below_minimum' });
  });
});

describe('mapSymbol', () => {
  it('maps suffixes and honours include/exclude lists', () => {
    expect(mapSymbol(withDefaults({ symbolMap: { EURUSD: 'EURUSD.m' } }), 'EURUSD')).toEqual({
      ok: true,
      symbol: 'EURUSD.m',
    });
    expect(mapSymbol(withDefaults({ excludeSymbols: ['XAUUSD'] }), 'XAUUSD')).toMatchObject({
      ok: false,
      reason: 'symbol_excluded',
    });
    expect(mapSymbol(withDefaults({ includeSymbols: ['EURUSD'] }), 'GBPUSD')).toMatchObject({
      ok: false,
      reason: 'symbol_not_included',
    });
  });
});

describe('sizeVolume: risk_percent', () => {
  const risk = (pct: string, extra: Partial<Parameters<typeof withDefaults>[0]> = {}) =>
    withDefaults({ sizing: { mode: 'risk_percent', riskPercent: pct }, ...extra });
  const base = {
    masterVolume: new Decimal(5),
    slaveEquity: new Decimal(10_000),
    entryPrice: new Decimal('1.10000'),
    stopLoss: new Decimal('1.09500'),
  };

  it('sizes so the loss at the stop is the given share of the Slave equity (1% of 10000 over 50 pips on EURUSD = 0.2 lot)', () => {
    // 50 pips x 100000 units = 500 USD per lot; 100 USD of risk -> 0.2 lot, whatever the Master traded.
    expect(sizeVolume(risk('1'), base, spec)).toEqual({ ok: true, volume: new Decimal('0.2') });
    // A stop above the entry (a sell) measures the same distance.
    expect(sizeVolume(risk('1'), { ...base, stopLoss: new Decimal('1.10500') }, spec)).toEqual({
      ok: true,
      volume: new Decimal('0.2'),
    });
  });

  it('rounds DOWN to the step (never more risk than asked) and converts a base-currency account (USDJPY on USD)', () => {
    // 0.7% of 10000 = 70 USD over 50 pips: 0.14 lot.
    expect(sizeVolume(risk('0.7'), base, spec)).toEqual({ ok: true, volume: new Decimal('0.14') });
    // 33.33 / 500 = 0.06666 -> 0.06
    expect(sizeVolume(risk('0.3333'), base, spec)).toEqual({ ok: true, volume: new Decimal('0.06') });
    const jpy: InstrumentSpec = { ...spec, symbol: 'USDJPY', tickSize: new Decimal('0.001') };
    // 1 JPY = 1/150 USD; 0.5 JPY x 100000 = 50000 JPY = 333.33 USD per lot; 100 USD -> 0.30 lot.
    const r = sizeVolume(
      risk('1'),
      {
        ...base,
        entryPrice: new Decimal('150.000'),
        stopLoss: new Decimal('149.500'),
        quoteToAccount: new Decimal(1).div(150),
      },
      jpy,
    );
    expect(r).toEqual({ ok: true, volume: new Decimal('0.3') });
  });

  it('property: the loss at the stop never exceeds the budget, and one more step would exceed it', () => {
    const pips = fc.integer({ min: 1, max: 2000 });
    const pct = fc.integer({ min: 1, max: 500 }).map((n) => new Decimal(n).div(100));
    const equity = fc.integer({ min: 100, max: 1_000_000 });
    fc.assert(
      fc.property(pips, pct, equity, (p, r, eq) => {
        const stop = new Decimal('1.10000').minus(new Decimal(p).div(100000));
        const res = sizeVolume(risk(r.toString()), { ...base, slaveEquity: new Decimal(eq), stopLoss: stop }, spec);
        const budget = new Decimal(eq).mul(r).div(100);
        const perLot = new Decimal(p).div(100000).mul(100000);
        if (!res.ok) return res.reason === 'volume_below_minimum' && perLot.mul('0.01').gt(budget);
        const capped = res.volume.eq(spec.maxVolume);
        return res.volume.mul(perLot).lte(budget) && (capped || res.volume.plus('0.01').mul(perLot).gt(budget));
      }),
    );
  });

  it('skips without a stop loss, with the stop at the entry, or without the Slave equity; caps and minimums apply', () => {
    expect(sizeVolume(risk('1'), { ...base, stopLoss: null }, spec)).toMatchObject({
      ok: false,
      reason: 'no_stop_loss',
    });
    expect(sizeVolume(risk('1'), { ...base, stopLoss: base.entryPrice }, spec)).toMatchObject({
      ok: false,
      reason: 'no_stop_loss',
    });
    expect(sizeVolume(risk('1'), { ...base, slaveEquity: null }, spec)).toMatchObject({
      ok: false,
      reason: 'missing_account_data',
    });
    expect(sizeVolume(risk('1'), { ...base, entryPrice: null }, spec)).toMatchObject({
      ok: false,
      reason: 'missing_account_data',
    });
    expect(sizeVolume(risk('1', { maxVolume: '0.1' }), base, spec)).toEqual({ ok: true, volume: new Decimal('0.1') });
    expect(sizeVolume(risk('0.001'), base, spec)).toMatchObject({ ok: false, reason: 'volume_below_minimum' });
  });
});

describe('validateRule: risk_percent and maxSlippage', () => {
  it('refuses a risk rule that cannot work and a bad slippage bound', () => {
    expect(validateRule(withDefaults({ sizing: { mode: 'risk_percent', riskPercent: '1' } }), null)).toEqual([]);
    expect(
      validateRule(withDefaults({ sizing: { mode: 'risk_percent', riskPercent: '1' }, copyStopLoss: false }), null),
    ).toEqual([expect.stringContaining('needs copyStopLoss on')]);
    expect(validateRule(withDefaults({ sizing: { mode: 'risk_percent', riskPercent: '0' } }), null)).toEqual([
      'sizing.riskPercent must be greater than 0',
    ]);
    expect(validateRule(withDefaults({ sizing: { mode: 'risk_percent', riskPercent: '150' } }), null)).toEqual([
      'sizing.riskPercent must be at most 100',
    ]);
    expect(validateRule(withDefaults({ sizing: { mode: 'risk_percent' } as never }), null)).toEqual([
      'sizing.riskPercent is required for risk_percent sizing',
    ]);
    expect(validateRule(withDefaults({ maxSlippage: '0.0005' }), null)).toEqual([]);
    expect(validateRule(withDefaults({ maxSlippage: '0' }), null)).toEqual(['maxSlippage must be greater than 0']);
    expect(validateRule(withDefaults({ maxSlippage: 'abc' }), null)).toEqual([
      'maxSlippage must be a decimal number, got "abc"',
    ]);
  });

  it('refuses maxSlippage on a platform that gives no quotes', () => {
    const noQuotes = { ...SIM_CAPABILITIES, has: { ...SIM_CAPABILITIES.has, quotes: false } };
    expect(validateRule(withDefaults({ maxSlippage: '0.0005' }), noQuotes)).toEqual([
      expect.stringContaining('give no price quote'),
    ]);
    expect(validateRule(withDefaults({ maxSlippage: '0.0005' }), SIM_CAPABILITIES)).toEqual([]);
  });
});
