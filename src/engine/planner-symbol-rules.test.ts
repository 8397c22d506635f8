import { describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import { testAccount } from '../../test/helpers/account.js';
import { validateRule, withDefaults, type CopyRule } from '../domain/copy-rule.js';
import { slaveSymbol } from '../domain/copy-mapping.js';
import type { InstrumentSpec } from '../domain/types.js';
import { planOpen, type MasterOpen, type PlannedCopy, type SlaveContext } from './planner.js';

const spec = (symbol: string, contractSize = 100_000): InstrumentSpec => ({
  symbol,
  volumeStep: dec('0.01'),
  minVolume: dec('0.01'),
  maxVolume: dec('100'),
  contractSize: dec(contractSize),
  tickSize: dec('0.00001'),
});
const open = (o: Partial<MasterOpen> = {}): MasterOpen => ({
  tradeId: 'trd_1',
  masterAccount: testAccount('m', { role: 'master' }),
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('1'),
  price: null,
  stopLoss: null,
  takeProfit: null,
  at: 1000,
  fillPrice: dec('1.10000'),
  ...o,
});
const ctx = (rule: Partial<CopyRule>, s = spec('EURUSD')): SlaveContext => ({
  account: testAccount('s', { currency: 'USD' }),
  rule: withDefaults(rule),
  spec: s,
});
const one = (a: MasterOpen, c: SlaveContext): PlannedCopy => planOpen(a, [c], 1000)[0]!;
const volume = (p: PlannedCopy) => (p.kind === 'send' ? p.volume.toString() : `${p.reason}: ${p.detail}`);

describe('symbol mapping by prefix and suffix, beside the explicit map', () => {
  it('adds the Slave affixes, takes the Master ones off first; the explicit map wins', () => {
    const r = withDefaults({ symbolSuffix: '.m', masterSymbolSuffix: '.a', symbolMap: { XAUUSD: 'GOLD' } });
    expect(slaveSymbol(r, 'EURUSD.a')).toBe('EURUSD.m');
    expect(slaveSymbol(r, 'GBPUSD')).toBe('GBPUSD.m');
    expect(slaveSymbol(r, 'XAUUSD')).toBe('GOLD');
    expect(slaveSymbol(withDefaults({ symbolPrefix: 'x', symbolSuffix: 'pro' }), 'EURUSD')).toBe('xEURUSDpro');
    expect(slaveSymbol(withDefaults({}), 'EURUSD')).toBe('EURUSD');
    // An inherited property name is a symbol like any other, not a map entry.
    expect(slaveSymbol(withDefaults({}), 'constructor')).toBe('constructor');
  });
  it('the planner sends the copy on the mapped symbol', () => {
    expect(one(open(), ctx({ symbolSuffix: '.m' }, spec('EURUSD.m')))).toMatchObject({
      kind: 'send',
      symbol: 'EURUSD.m',
    });
  });
});

describe('per-symbol overrides', () => {
  const rule: Partial<CopyRule> = {
    sizing: { mode: 'multiplier', multiplier: '2' },
    maxVolume: '10',
    symbolOverrides: {
      XAUUSD: { multiplier: '0.5', maxVolume: '0.3' },
      US30: { volume: '0.1' },
      BTCUSD: { copy: false },
    },
  };
  it('an override sizes its symbol; the rest keep the rule', () => {
    expect(volume(one(open(), ctx(rule)))).toBe('2');
    expect(volume(one(open({ symbol: 'XAUUSD' }), ctx(rule, spec('XAUUSD', 100))))).toBe('0.3');
    expect(volume(one(open({ symbol: 'XAUUSD', volume: dec('0.4') }), ctx(rule, spec('XAUUSD', 100))))).toBe('0.2');
    expect(volume(one(open({ symbol: 'US30', volume: dec('5') }), ctx(rule, spec('US30', 1))))).toBe('0.1');
  });
  it('an override off skips its symbol with the reason', () => {
    expect(one(open({ symbol: 'BTCUSD' }), ctx(rule, spec('BTCUSD', 1)))).toMatchObject({
      kind: 'skip',
      reason: 'symbol_off',
      detail: "BTCUSD is off in the rule's symbolOverrides",
    });
  });
  it('validation names the override field', () => {
    const problems = validateRule(
      withDefaults({
        symbolOverrides: { XAUUSD: { multiplier: '0', volume: '1' }, US30: { copy: false, volume: '1' } },
      }),
      null,
    );
    expect(problems).toEqual([
      'symbolOverrides.XAUUSD.multiplier must be a decimal number greater than 0',
      'symbolOverrides.XAUUSD takes a multiplier or a volume, not both',
      'symbolOverrides.US30 is off (copy false): it takes no sizing',
    ]);
    expect(validateRule(withDefaults({ symbolSuffix: '. m' }), null)).toEqual([
      'symbolSuffix must be at most 16 characters without spaces',
    ]);
  });
});

describe('minimum trade amount', () => {
  it("skips a copy worth less than the minimum in the Slave's currency, with the figures; a bigger one goes", () => {
    // 0.01 lot of EURUSD at 1.1 = 1,100 USD.
    const small = one(open({ volume: dec('0.01') }), ctx({ minTradeAmount: '2000' }));
    expect(small).toMatchObject({
      kind: 'skip',
      reason: 'trade_amount_below_minimum',
      detail: '0.01 EURUSD at 1.1 is worth 1100 USD, below the minimum 2000',
    });
    expect(volume(one(open({ volume: dec('0.02') }), ctx({ minTradeAmount: '2000' })))).toBe('0.02');
    // No price to value it at: not sent blind.
    expect(one(open({ fillPrice: null }), ctx({ minTradeAmount: '2000' }))).toMatchObject({
      reason: 'trade_amount_unknown',
    });
  });
});

describe('max slippage in points of each symbol', () => {
  const q = (bid: string, ask: string) => ({ bid: dec(bid), ask: dec(ask), time: null });
  const at = (symbol: string, tick: string, fill: string, ask: string, rule: Partial<CopyRule>) =>
    one(open({ symbol, fillPrice: dec(fill) }), {
      ...ctx(rule, { ...spec(symbol), tickSize: dec(tick) }),
      quote: q(ask, ask),
    });
  it('50 points is 5 pips on a 5-digit EURUSD and on a 3-digit USDJPY alike', () => {
    const rule = { maxSlippagePoints: '50' };
    expect(at('EURUSD', '0.00001', '1.10000', '1.10050', rule).kind).toBe('send');
    expect(at('EURUSD', '0.00001', '1.10000', '1.10051', rule)).toMatchObject({
      kind: 'skip',
      reason: 'slippage_exceeded',
      detail:
        "the Slave's ask 1.10051 is 0.00051 worse than the Master's fill 1.1 (maxSlippagePoints 50 x tick 0.00001 = 0.0005)",
    });
    expect(at('USDJPY', '0.001', '150.000', '150.050', rule).kind).toBe('send');
    expect(at('USDJPY', '0.001', '150.000', '150.051', rule).kind).toBe('skip');
    // One absolute distance fits neither: 0.0005 is 5 pips of EURUSD and nothing of USDJPY.
    expect(at('USDJPY', '0.001', '150.000', '150.010', { maxSlippage: '0.0005' }).kind).toBe('skip');
  });
  it('a symbol override sets its own points, over the rule’s price distance', () => {
    const rule: Partial<CopyRule> = { maxSlippage: '0.0005', symbolOverrides: { XAUUSD: { maxSlippagePoints: '30' } } };
    expect(at('XAUUSD', '0.01', '2000.00', '2000.30', rule).kind).toBe('send');
    expect(at('XAUUSD', '0.01', '2000.00', '2000.31', rule)).toMatchObject({ reason: 'slippage_exceeded' });
    expect(at('EURUSD', '0.00001', '1.10000', '1.10051', rule)).toMatchObject({ reason: 'slippage_exceeded' });
  });
  it('points and a price distance together are refused, naming both', () => {
    expect(validateRule(withDefaults({ maxSlippage: '0.0005', maxSlippagePoints: '50' }), null)).toEqual([
      'give maxSlippage (a price distance) or maxSlippagePoints (ticks of each symbol), not both',
    ]);
  });
});
