import { describe, expect, it } from 'vitest';
import { Decimal, dec } from '../domain/decimal.js';
import type { Account } from '../domain/account.js';
import { testAccount } from '../../test/helpers/account.js';
import { withDefaults, type CopyRule } from '../domain/copy-rule.js';
import type { Capabilities } from '../domain/capabilities.js';
import type { InstrumentSpec, OrderType } from '../domain/types.js';
import { SIM_CAPABILITIES } from '../platforms/sim/capabilities.js';
import { deniedByCapability } from './capability-check.js';
import { planOpen, type MasterOpen, type PlannedCopy, type SlaveContext } from './planner.js';

const acct = testAccount;
const spec: InstrumentSpec = {
  symbol: 'EURUSD',
  volumeStep: dec('0.01'),
  minVolume: dec('0.01'),
  maxVolume: dec('100'),
  contractSize: dec(100_000),
  tickSize: dec('0.00001'),
};
const master = acct('m', { role: 'master' });
const open = (o: Partial<MasterOpen> = {}): MasterOpen => ({
  tradeId: 'trd_1',
  masterAccount: master,
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('1'),
  price: null,
  stopLoss: dec('1.09500'),
  takeProfit: dec('1.11000'),
  at: 1000,
  fillPrice: dec('1.10003'),
  ...o,
});
const ctx = (rule: Partial<CopyRule>, o: Partial<SlaveContext> = {}): SlaveContext => ({
  account: acct('s'),
  rule: withDefaults(rule),
  spec,
  ...o,
});
const q = (bid: string, ask: string) => ({ bid: dec(bid), ask: dec(ask), time: null });
const one = (a: MasterOpen, c: SlaveContext): PlannedCopy => planOpen(a, [c], 1000)[0]!;

describe('planOpen: maxSlippage', () => {
  it('sends when the Slave ask is within the bound of the Master fill, skips past it with the figures', () => {
    const rule = { maxSlippage: '0.0005' };
    expect(one(open(), ctx(rule, { quote: q('1.10045', '1.10053') }))).toMatchObject({
      kind: 'send',
      volume: dec('1'),
    });
    const past = one(open(), ctx(rule, { quote: q('1.10047', '1.10054') }));
    expect(past).toMatchObject({ kind: 'skip', reason: 'slippage_exceeded' });
    expect(past.kind === 'skip' && past.detail).toBe(
      "the Slave's ask 1.10054 is 0.00051 worse than the Master's fill 1.10003 (maxSlippage 0.0005)",
    );
    // A better price is never slippage.
    expect(one(open(), ctx(rule, { quote: q('1.09000', '1.09006') })).kind).toBe('send');
  });

  it('measures a sell against the bid, and a reversed copy by its own side', () => {
    const sell = open({
      side: 'sell',
      fillPrice: dec('1.10000'),
      stopLoss: dec('1.10500'),
      takeProfit: dec('1.09000'),
    });
    expect(one(sell, ctx({ maxSlippage: '0.0002' }, { quote: q('1.09970', '1.09976') }))).toMatchObject({
      kind: 'skip',
      reason: 'slippage_exceeded',
    });
    expect(one(sell, ctx({ maxSlippage: '0.0002' }, { quote: q('1.09990', '1.09996') })).kind).toBe('send');
    // Reversed: the Master sold at 1.10000, the copy buys at the ask.
    expect(one(sell, ctx({ maxSlippage: '0.0002', reverse: true }, { quote: q('1.10020', '1.10026') }))).toMatchObject({
      kind: 'skip',
      reason: 'slippage_exceeded',
      side: 'buy',
    });
  });

  it('skips when it cannot measure (no quote, no Master fill); pending orders and rules without a bound are not checked', () => {
    expect(one(open(), ctx({ maxSlippage: '0.0005' }))).toMatchObject({ kind: 'skip', reason: 'slippage_unknown' });
    expect(one(open({ fillPrice: null }), ctx({ maxSlippage: '0.0005' }, { quote: q('1.1', '1.1') }))).toMatchObject({
      kind: 'skip',
      reason: 'slippage_unknown',
    });
    expect(one(open({ type: 'limit', price: dec('1.09000') }), ctx({ maxSlippage: '0.0005' })).kind).toBe('send');
    expect(one(open(), ctx({}, { quote: q('1.20000', '1.20006') })).kind).toBe('send');
  });
});

describe('planOpen: risk_percent', () => {
  const risk = (pct: string, extra: Partial<CopyRule> = {}) => ({
    sizing: { mode: 'risk_percent' as const, riskPercent: pct },
    ...extra,
  });

  it('sizes from the Slave ask to the copy stop: 1% of 10000 over 50.3 pips = 0.19 lot', () => {
    const p = one(open(), ctx(risk('1'), { quote: q('1.09997', '1.10003') }));
    expect(p).toMatchObject({ kind: 'send', volume: dec('0.19'), stopLoss: dec('1.09500') });
    // 100 USD / (0.00503 x 100000) = 0.1988 -> 0.19, never rounded up past the budget.
    expect(p.kind === 'send' && p.volume.mul('0.00503').mul(100_000).lte(100)).toBe(true);
  });

  it('without a Slave quote uses the Master fill; a pending order uses its price', () => {
    expect(one(open({ fillPrice: dec('1.10000') }), ctx(risk('1')))).toMatchObject({
      kind: 'send',
      volume: dec('0.2'),
    });
    expect(
      one(open({ type: 'limit', price: dec('1.09800'), fillPrice: null, stopLoss: dec('1.09600') }), ctx(risk('0.5'))),
    ).toMatchObject({ kind: 'send', volume: dec('0.25') });
  });

  it('skips with no_stop_loss when the Master trade has none or the rule does not copy it', () => {
    expect(one(open({ stopLoss: null }), ctx(risk('1')))).toMatchObject({ kind: 'skip', reason: 'no_stop_loss' });
    expect(one(open(), ctx(risk('1', { copyStopLoss: false })))).toMatchObject({
      kind: 'skip',
      reason: 'no_stop_loss',
    });
  });

  it('a reversed copy is sized to the stop it carries (the Master take profit)', () => {
    // Reversed buy -> sell at the bid 1.09997, stop = Master TP 1.11000: 100.3 pips -> 100 / 1003 = 0.0997 -> 0.09.
    const p = one(open(), ctx(risk('1', { reverse: true }), { quote: q('1.09997', '1.10003') }));
    expect(p).toMatchObject({ kind: 'send', side: 'sell', stopLoss: dec('1.11000'), volume: dec('0.09') });
    expect(one(open({ takeProfit: null }), ctx(risk('1', { reverse: true })))).toMatchObject({
      kind: 'skip',
      reason: 'no_stop_loss',
    });
  });

  it('converts the loss into the account currency: a EUR account on GBPUSD uses the EURUSD cross rate', () => {
    const gbp: InstrumentSpec = { ...spec, symbol: 'GBPUSD' };
    const a = open({ symbol: 'GBPUSD', fillPrice: dec('1.27000'), stopLoss: dec('1.26500'), takeProfit: null });
    // 50 pips x 100000 = 500 USD per lot = 500 / 1.25 = 400 EUR; 1% of 10000 EUR = 100 EUR -> 0.25 lot.
    const eur = acct('s', { currency: 'EUR' });
    expect(
      one(a, { account: eur, rule: withDefaults(risk('1')), spec: gbp, crossRate: new Decimal(1).div('1.25') }),
    ).toMatchObject({ kind: 'send', volume: dec('0.25') });
    // A USD account holding USDJPY: 1 JPY = 1/150 USD.
    const jpy: InstrumentSpec = { ...spec, symbol: 'USDJPY', tickSize: dec('0.001') };
    const j = open({ symbol: 'USDJPY', fillPrice: dec('150.000'), stopLoss: dec('149.500'), takeProfit: null });
    expect(one(j, { account: acct('s'), rule: withDefaults(risk('1')), spec: jpy })).toMatchObject({
      kind: 'send',
      volume: dec('0.3'),
    });
  });
});

describe('deniedByCapability', () => {
  const without = (...off: string[]): Capabilities => ({
    ...SIM_CAPABILITIES,
    has: { ...SIM_CAPABILITIES.has, ...Object.fromEntries(off.map((f) => [f, false])) },
  });

  it('denies each action whose flag is false, naming the flag', () => {
    const cases: Array<[string, OrderType, string, Record<string, unknown>?]> = [
      ['reduce', 'market', 'partialClose'],
      ['heal_reduce', 'market', 'partialClose'],
      ['modify', 'market', 'modifyPositionSlTp'],
      ['order_placed', 'limit', 'pendingOrders'],
      ['order_modified', 'limit', 'modifyPendingOrder'],
      ['order_cancelled', 'limit', 'cancelPendingOrder'],
      ['open', 'market', 'marketOrders'],
      ['heal_open', 'market', 'marketOrders'],
      ['open', 'market', 'stopLossOnOpen', { stopLoss: '1.09' }],
      ['increase', 'market', 'takeProfitOnOpen', { takeProfit: '1.2' }],
    ];
    for (const [action, type, flag, extra] of cases) {
      expect(deniedByCapability({ action, type, ...extra }, without(flag)), `${action} without ${flag}`).toMatchObject({
        reason: 'capability_missing',
        detail: expect.stringMatching(new RegExp(`^${flag}`)),
      });
      expect(deniedByCapability({ action, type, ...extra }, SIM_CAPABILITIES), `${action} with everything`).toBeNull();
    }
  });

  it("lets 'emulated' through, never needs a flag to close in full, and opens without SL/TP need no stop flags", () => {
    expect(
      deniedByCapability(
        { action: 'reduce', type: 'market' },
        { ...SIM_CAPABILITIES, has: { ...SIM_CAPABILITIES.has, partialClose: 'emulated' } },
      ),
    ).toBeNull();
    expect(
      deniedByCapability({ action: 'close', type: 'market' }, without('partialClose', 'marketOrders', 'closeAll')),
    ).toBeNull();
    expect(
      deniedByCapability({ action: 'open', type: 'market', stopLoss: null }, without('stopLossOnOpen')),
    ).toBeNull();
    // A pending open is a pending order; an increase is always at market whatever the Master's order was.
    expect(deniedByCapability({ action: 'open', type: 'stop' }, without('pendingOrders'))).toMatchObject({
      detail: expect.stringMatching(/^pendingOrders/),
    });
    expect(deniedByCapability({ action: 'increase', type: 'limit' }, without('pendingOrders'))).toBeNull();
  });

  it('denies a pending order type the platform does not take', () => {
    expect(
      deniedByCapability(
        { action: 'order_placed', type: 'stop' },
        { ...SIM_CAPABILITIES, orderTypes: ['market', 'limit'] },
      ),
    ).toMatchObject({ reason: 'capability_missing', detail: expect.stringMatching(/^orderTypes stop/) });
  });
});

describe('planOpen: levels computed once per fan-out', () => {
  it('rounds each Slave to its own tick grid, and a reversed Slave beside a plain one swaps its own levels', () => {
    const coarse: InstrumentSpec = { ...spec, tickSize: dec('0.001') };
    const a = open({ type: 'limit', price: dec('1.100049'), stopLoss: dec('1.095449'), takeProfit: dec('1.110551') });
    const rule = { copyPendingOrders: true, copyTakeProfit: true };
    const [fine, rough, reversed, fineAgain] = planOpen(
      a,
      [
        ctx(rule),
        ctx(rule, { spec: coarse }),
        ctx({ ...rule, reverse: true }, { spec: coarse }),
        ctx(rule, { spec: { ...spec } }),
      ],
      1000,
    );
    const levels = (p: PlannedCopy | undefined) =>
      p?.kind === 'send' ? [p.price?.toString(), p.stopLoss?.toString(), p.takeProfit?.toString()] : p;
    expect(levels(fine)).toEqual(['1.10005', '1.09545', '1.11055']);
    expect(levels(rough)).toEqual(['1.1', '1.095', '1.111']);
    expect(levels(reversed)).toEqual(['1.1', '1.111', '1.095']);
    // Same grid in another spec object: the same values.
    expect(levels(fineAgain)).toEqual(['1.10005', '1.09545', '1.11055']);
  });
});

describe('planOpen: sizing in a fan-out', () => {
  it('sizes each Slave by its own rule and spec when Slaves of one fan-out share some and not others', () => {
    const fine: InstrumentSpec = { ...spec, volumeStep: dec('0.001'), minVolume: dec('0.001') };
    const slaves = [
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.5' } }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.5' }, maxVolume: '0.3' }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.25' } }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.005' } }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.005' } }, { spec: fine }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.001' }, minVolume: '0.02' }),
      ctx({ sizing: { mode: 'fixed', volume: '0.25' } }),
      ctx({ sizing: { mode: 'fixed', volume: '0.25' }, maxVolume: '0.1' }),
      ctx({ sizing: { mode: 'multiplier', multiplier: '0.5' } }),
    ];
    const sized = planOpen(open({ volume: dec('1.2') }), slaves, 1000).map((p) =>
      p.kind === 'send' ? p.volume.toString() : p.reason,
    );
    expect(sized).toEqual(['0.6', '0.3', '0.3', 'volume_below_minimum', '0.006', '0.02', '0.25', '0.1', '0.6']);
  });
});

describe('planOpen: side, magic number and comment filters', () => {
  it("buy-only reads the Master's side, before reverse: a reversed buy-only Slave sells the Master's buys", () => {
    expect(one(open({ side: 'sell' }), ctx({ sides: 'buy' }))).toMatchObject({
      kind: 'skip',
      reason: 'side_filtered',
      side: 'sell',
    });
    expect(one(open(), ctx({ sides: 'buy', reverse: true }))).toMatchObject({ kind: 'send', side: 'sell' });
    expect(one(open(), ctx({ sides: 'sell' }))).toMatchObject({ kind: 'skip', reason: 'side_filtered' });
  });

  it('magic and comment filters read what the Master trade carries; each Slave of a fan-out by its own rule', () => {
    const a = open({ magic: 1001, comment: 'Grid EA' });
    const plan = planOpen(
      a,
      [
        ctx({ includeMagic: [1001] }),
        ctx({ includeMagic: [2002] }),
        ctx({ excludeMagic: [1001] }),
        ctx({ includeComments: ['grid'] }),
        ctx({ excludeComments: ['GRID'] }),
        ctx({}),
      ],
      1000,
    );
    expect(plan.map((p) => (p.kind === 'skip' ? p.reason : 'send'))).toEqual([
      'send',
      'magic_not_included',
      'magic_excluded',
      'send',
      'comment_excluded',
      'send',
    ]);
    // A trade whose platform gives no magic number is not in an include list.
    expect(one(open(), ctx({ includeMagic: [1001] }))).toMatchObject({ kind: 'skip', reason: 'magic_not_included' });
  });
});
