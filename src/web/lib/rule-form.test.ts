import { describe, expect, it } from 'vitest';
import type { CopyRule } from '../api/types';
import { describeRule, formToRule, ruleToForm } from './rule-form';

const base: CopyRule = {
  sizing: { mode: 'multiplier', multiplier: 0.5 },
  minVolume: null,
  maxVolume: null,
  symbolMap: { EURUSD: 'EURUSD.m' },
  includeSymbols: [],
  excludeSymbols: ['XAUUSD'],
  reverse: false,
  copyStopLoss: true,
  copyTakeProfit: true,
  copyPendingOrders: true,
  maxDelayMs: 30000,
  maxSlippage: null,
  sides: 'both',
  includeMagic: [],
  excludeMagic: [],
  includeComments: [],
  excludeComments: [],
  symbolOverrides: {},
  symbolPrefix: '',
  symbolSuffix: '',
  masterSymbolPrefix: '',
  masterSymbolSuffix: '',
  minTradeAmount: null,
  maxSlippagePoints: null,
};

describe('rule form', () => {
  it('round-trips a rule', () => {
    const { rule, errors } = formToRule(ruleToForm(base));
    expect(errors).toEqual({});
    // Answers carry numbers; the form sends the decimals as the text typed.
    expect(rule).toEqual({ ...base, sizing: { mode: 'multiplier', multiplier: '0.5' } });
  });
  it('fixed sizing needs a positive volume', () => {
    const f = { ...ruleToForm(base), mode: 'fixed' as const, volume: '' };
    expect(formToRule(f).errors.volume).toBe('required');
    expect(formToRule({ ...f, volume: '0' }).errors.volume).toBe('must be more than 0');
    expect(formToRule({ ...f, volume: '0.03' }).rule?.sizing).toEqual({ mode: 'fixed', volume: '0.03' });
  });
  it('ratio sizing takes an optional multiplier', () => {
    const f = { ...ruleToForm(base), mode: 'balance_ratio' as const, multiplier: '' };
    expect(formToRule(f).rule?.sizing).toEqual({ mode: 'balance_ratio' });
  });
  it('rejects bad decimals, min above max, bad map lines, a symbol both in and out, bad delays', () => {
    const f = ruleToForm(base);
    expect(formToRule({ ...f, multiplier: '1,5' }).errors.multiplier).toMatch(/decimal/);
    expect(formToRule({ ...f, minVolume: '2', maxVolume: '1' }).errors.maxVolume).toMatch(/below/);
    expect(formToRule({ ...f, symbolMap: 'EURUSD=EURUSD.m\nGBPUSD' }).errors.symbolMap).toMatch(/line 2/);
    expect(formToRule({ ...f, includeSymbols: 'XAUUSD' }).errors.excludeSymbols).toMatch(/XAUUSD/);
    expect(formToRule({ ...f, maxDelayMs: '-1' }).errors.maxDelayMs).toBeDefined();
  });
  it('accepts -> and => in the map and commas or spaces in lists', () => {
    const { rule } = formToRule({
      ...ruleToForm(base),
      symbolMap: 'EURUSD -> EURUSD.m\nGBPUSD=>GBPUSD.x',
      includeSymbols: 'EURUSD, GBPUSD USDJPY',
      excludeSymbols: '',
    });
    expect(rule?.symbolMap).toEqual({ EURUSD: 'EURUSD.m', GBPUSD: 'GBPUSD.x' });
    expect(rule?.includeSymbols).toEqual(['EURUSD', 'GBPUSD', 'USDJPY']);
  });
  it('describes a rule in one line', () => {
    expect(describeRule(base)).toBe('x0.5 · 1 mapped · not XAUUSD');
  });
});

describe('rule form: risk sizing and max slippage', () => {
  it('round-trips a risk_percent rule with a slippage bound, and describes it', () => {
    const r: CopyRule = { ...base, sizing: { mode: 'risk_percent', riskPercent: 1.5 }, maxSlippage: 0.0005 };
    const { rule, errors } = formToRule(ruleToForm(r));
    expect(errors).toEqual({});
    expect(rule).toEqual({ ...base, sizing: { mode: 'risk_percent', riskPercent: '1.5' }, maxSlippage: '0.0005' });
    expect(describeRule(r)).toBe('risk 1.5% at the stop · slippage ≤ 0.0005 · 1 mapped · not XAUUSD');
  });
  it('risk sizing needs a percent in (0, 100] and the stop loss copied; slippage is a positive decimal or empty', () => {
    const f = { ...ruleToForm(base), mode: 'risk_percent' as const, riskPercent: '' };
    expect(formToRule(f).errors.riskPercent).toBe('required');
    expect(formToRule({ ...f, riskPercent: '0' }).errors.riskPercent).toBe('must be more than 0');
    expect(formToRule({ ...f, riskPercent: '101' }).errors.riskPercent).toBe('at most 100');
    expect(formToRule({ ...f, riskPercent: '1', copyStopLoss: false }).errors.copyStopLoss).toMatch(/stop loss/);
    expect(formToRule({ ...f, riskPercent: '1', maxSlippage: '0' }).errors.maxSlippage).toBe('must be more than 0');
    expect(formToRule({ ...f, riskPercent: '1', maxSlippage: '' }).rule?.maxSlippage).toBeNull();
  });
});

describe('rule form: side, magic number and comment filters', () => {
  it('sends the side and the lists, comments split on commas only', () => {
    const { rule, errors } = formToRule({
      ...ruleToForm(base),
      sides: 'sell',
      includeMagic: '1001, 2002',
      excludeMagic: '',
      includeComments: 'Grid EA, scalper',
      excludeComments: 'manual',
    });
    expect(errors).toEqual({});
    expect(rule).toMatchObject({
      sides: 'sell',
      includeMagic: [1001, 2002],
      excludeMagic: [],
      includeComments: ['Grid EA', 'scalper'],
      excludeComments: ['manual'],
    });
  });
  it('refuses a magic number that is not a whole number, and one both in and out', () => {
    const f = ruleToForm(base);
    expect(formToRule({ ...f, includeMagic: '12a' }).errors.includeMagic).toMatch(/12a/);
    expect(formToRule({ ...f, includeMagic: '7', excludeMagic: '7' }).errors.excludeMagic).toMatch(/both/);
  });
  it('describes the filters', () => {
    expect(describeRule({ ...base, sides: 'buy', includeMagic: [7], excludeComments: ['news'] })).toBe(
      'x0.5 · 1 mapped · not XAUUSD · buys only · magic 7 · comment lacks news',
    );
  });
});

describe('rule form: per-symbol rules, symbol affixes, minimum trade amount', () => {
  it('reads and writes overrides one symbol a line', () => {
    const r = { ...base, symbolOverrides: { XAUUSD: { copy: false }, US30: { volume: 0.1, maxVolume: 1 } } };
    const f = ruleToForm(r);
    expect(f.symbolOverrides).toBe('XAUUSD off\nUS30 volume=0.1 maxVolume=1');
    const { rule, errors } = formToRule({ ...f, symbolSuffix: '.m', minTradeAmount: '1000' });
    expect(errors).toEqual({});
    expect(rule).toMatchObject({
      symbolOverrides: { XAUUSD: { copy: false }, US30: { volume: '0.1', maxVolume: '1' } },
      symbolSuffix: '.m',
      minTradeAmount: '1000',
    });
  });
  it('refuses an override line it cannot read, a spaced suffix and a bad amount', () => {
    const f = ruleToForm(base);
    expect(formToRule({ ...f, symbolOverrides: 'XAUUSD\nUS30 multiplier=0' }).errors.symbolOverrides).toMatch(/line 1/);
    expect(formToRule({ ...f, symbolOverrides: 'US30 multiplier=1 volume=1' }).errors.symbolOverrides).toMatch(
      /line 1/,
    );
    expect(formToRule({ ...f, symbolSuffix: '. m' }).errors.symbolSuffix).toBeDefined();
    expect(formToRule({ ...f, minTradeAmount: '-5' }).errors.minTradeAmount).toBeDefined();
  });
});

describe('rule form: max slippage in points', () => {
  it('sends the points, and refuses points beside a price distance', () => {
    const f = ruleToForm(base);
    expect(formToRule({ ...f, maxSlippagePoints: '50' }).rule?.maxSlippagePoints).toBe('50');
    expect(formToRule({ ...f, maxSlippagePoints: '50', maxSlippage: '0.0005' }).errors.maxSlippagePoints).toMatch(
      /not both/,
    );
    expect(formToRule({ ...f, symbolOverrides: 'XAUUSD maxSlippagePoints=30' }).rule?.symbolOverrides).toEqual({
      XAUUSD: { maxSlippagePoints: '30' },
    });
  });
});
