import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal, dec, isMultipleOf } from '../../src/domain/decimal.js';
import type { Account } from '../../src/domain/account.js';
import { PanicCloseService } from '../../src/engine/panic-close.js';
import { dayKeyOf, evaluate, EMPTY_STATE } from '../../src/engine/risk/evaluate.js';
import { RiskGuard } from '../../src/engine/risk/guard.js';
import { NO_LIMITS, effectiveLimits, type RiskLimits } from '../../src/engine/risk/limits.js';
import { lossAtStop, preTradeCheck, type PreTradeCheckContext } from '../../src/engine/risk/pre-trade.js';
import { engineHarness, type EngineHarness } from './harness.js';

const step = dec('0.01');
const minVol = dec('0.01');
const lots = (n: number) => dec(n).mul(step);
const price = (n: number) => dec(n).div(100_000);

const ctxArb = fc
  .record({
    volume: fc.integer({ min: 1, max: 1000 }).map(lots),
    entry: fc.integer({ min: 50_000, max: 200_000 }).map(price),
    slDistance: fc.option(fc.integer({ min: 1, max: 5000 }).map(price), { nil: null }),
    side: fc.constantFrom(1, -1),
    openVolume: fc.integer({ min: 0, max: 2000 }).map(lots),
    maxOpenVolume: fc.option(fc.integer({ min: 0, max: 2000 }).map(lots), { nil: null }),
    remaining: fc.option(
      fc.integer({ min: -5000, max: 50_000 }).map((n) => dec(n)),
      { nil: null },
    ),
    requireStopLoss: fc.boolean(),
  })
  .map(
    (a): PreTradeCheckContext => ({
      volume: a.volume,
      entryPrice: a.entry,
      stopLoss: a.slDistance === null ? null : a.entry.minus(a.slDistance.mul(a.side)),
      contractSize: dec(100_000),
      volumeStep: step,
      minVolume: minVol,
      quoteToAccount: dec(1),
      openVolume: a.openVolume,
      maxOpenVolume: a.maxOpenVolume,
      remainingDailyLoss: a.remaining,
      requireStopLoss: a.requireStopLoss,
    }),
  );

const volumeOf = (c: PreTradeCheckContext, v: ReturnType<typeof preTradeCheck>): Decimal | null =>
  v.action === 'skip' ? null : v.action === 'shrink' ? v.volume : c.volume;

describe('preTradeCheck (pure, property-based)', () => {
  it('never sizes up, stays on the step and at or above the minimum', () => {
    fc.assert(
      fc.property(ctxArb, (c) => {
        const v = volumeOf(c, preTradeCheck(c));
        if (v === null) return;
        expect(v.lte(c.volume)).toBe(true);
        expect(v.gte(c.minVolume)).toBe(true);
        expect(isMultipleOf(v, c.volumeStep)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('a copy it lets through keeps the loss at its stop within the remaining daily allowance', () => {
    fc.assert(
      fc.property(ctxArb, (c) => {
        const v = volumeOf(c, preTradeCheck(c));
        if (v === null || c.remainingDailyLoss === null) return;
        expect(c.remainingDailyLoss.gt(0)).toBe(true);
        const loss = lossAtStop(c, v);
        if (loss !== null) expect(loss.lte(c.remainingDailyLoss)).toBe(true);
        else expect(c.requireStopLoss).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('a copy it lets through keeps the open volume within its maximum', () => {
    fc.assert(
      fc.property(ctxArb, (c) => {
        const v = volumeOf(c, preTradeCheck(c));
        if (v !== null && c.maxOpenVolume !== null) expect(c.openVolume.plus(v).lte(c.maxOpenVolume)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('shrinks only as far as needed: one more step would break a limit', () => {
    fc.assert(
      fc.property(ctxArb, (c) => {
        const verdict = preTradeCheck(c);
        if (verdict.action !== 'shrink') return;
        const bigger = verdict.volume.plus(c.volumeStep);
        const loss = lossAtStop(c, bigger);
        const breaksLoss = c.remainingDailyLoss !== null && loss !== null && loss.gt(c.remainingDailyLoss);
        const breaksOpen = c.maxOpenVolume !== null && c.openVolume.plus(bigger).gt(c.maxOpenVolume);
        expect(breaksLoss || breaksOpen).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('allows everything when no limit is set', () => {
    fc.assert(
      fc.property(ctxArb, (c) => {
        expect(preTradeCheck({ ...c, maxOpenVolume: null, remainingDailyLoss: null })).toEqual({ action: 'allow' });
      }),
      { numRuns: 500 },
    );
  });

  it('prop-firm example: 200 at the stop per lot, 100 left today -> 0.5 lots; nothing left -> skipped', () => {
    const base: PreTradeCheckContext = {
      volume: dec(1),
      entryPrice: dec('1.1000'),
      stopLoss: dec('1.0980'),
      contractSize: dec(100_000),
      volumeStep: step,
      minVolume: minVol,
      quoteToAccount: dec(1),
      openVolume: dec(0),
      maxOpenVolume: null,
      remainingDailyLoss: dec(100),
      requireStopLoss: false,
    };
    expect(preTradeCheck(base)).toMatchObject({
      action: 'shrink',
      volume: dec('0.5'),
      reason: expect.stringContaining('daily_loss'),
    });
    expect(preTradeCheck({ ...base, remainingDailyLoss: dec(1) })).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('daily_loss'),
    });
    expect(preTradeCheck({ ...base, remainingDailyLoss: dec(0) })).toMatchObject({ action: 'skip' });
    expect(preTradeCheck({ ...base, stopLoss: null, requireStopLoss: true })).toMatchObject({
      action: 'skip',
      reason: expect.stringContaining('no stop loss'),
    });
    expect(
      preTradeCheck({ ...base, remainingDailyLoss: null, maxOpenVolume: dec('1.2'), openVolume: dec('0.5') }),
    ).toMatchObject({ action: 'shrink', volume: dec('0.7') });
  });
});

describe('evaluate and effective limits (pure)', () => {
  const L = (l: Partial<RiskLimits>) => effectiveLimits({ ...NO_LIMITS, ...l }, null)!;

  it('tracks the peak and the day start; the drawdown is measured from the peak', () => {
    const limits = L({ maxDrawdownPercent: '10' });
    const at = new Date('2026-03-02T10:00:00Z');
    let { state } = evaluate(limits, EMPTY_STATE, { equity: dec(1000), openVolume: dec(0), at });
    ({ state } = evaluate(limits, state, { equity: dec(1200), openVolume: dec(0), at }));
    expect(state.peakEquity).toBe('1200');
    expect(evaluate(limits, state, { equity: dec(1081), openVolume: dec(0), at }).breach).toBeNull();
    expect(evaluate(limits, state, { equity: dec(1080), openVolume: dec(0), at }).breach?.rule).toBe('max_drawdown');
  });

  it('the daily loss counts from the equity at the start of the trading day (reset hour)', () => {
    const limits = L({ dailyLossLimit: '50', dayResetHourUtc: 22 });
    const evening = new Date('2026-03-02T21:30:00Z');
    const { state } = evaluate(limits, EMPTY_STATE, { equity: dec(1000), openVolume: dec(0), at: evening });
    expect(evaluate(limits, state, { equity: dec(951), openVolume: dec(0), at: evening }).breach).toBeNull();
    expect(evaluate(limits, state, { equity: dec(950), openVolume: dec(0), at: evening }).breach?.rule).toBe(
      'daily_loss',
    );
    // After 22:00 UTC a new trading day starts from the equity then.
    const next = new Date('2026-03-02T22:10:00Z');
    expect(dayKeyOf(next, 22)).not.toBe(dayKeyOf(evening, 22));
    expect(evaluate(limits, state, { equity: dec(950), openVolume: dec(0), at: next }).breach).toBeNull();
  });

  it("an account's and its group's limits combine to the stricter", () => {
    const e = effectiveLimits(
      { ...NO_LIMITS, dailyLossLimit: '300', onBreach: 'pause' },
      { ...NO_LIMITS, dailyLossLimit: '200', maxDrawdownPercent: '8', onBreach: 'close_and_pause' },
    )!;
    expect(e.dailyLossLimit!.toString()).toBe('200');
    expect(e.maxDrawdownPercent!.toString()).toBe('8');
    expect(e.onBreach).toBe('close_and_pause');
    expect(effectiveLimits(NO_LIMITS, null)).toBeNull();
  });
});

describe('risk guard on the simulated broker', () => {
  let h: EngineHarness;
  let panic: PanicCloseService;
  let guard: RiskGuard;
  beforeAll(async () => {
    h = await engineHarness({ timeoutMs: 300 });
    panic = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      maxRounds: 4,
      backoffMs: 20,
      maxBackoffMs: 100,
      settleMs: 100,
    });
    guard = new RiskGuard(h.store, h.adapters, panic, { sampleMaxAgeMs: 60_000 });
  });
  afterAll(async () => {
    await guard?.stop();
    await panic?.stop();
    await h?.close();
  });

  /** One lot of EURUSD at 100 000 units: every 0.0001 the price moves is 10 in account currency. */
  const buyOneLot = (a: Account) =>
    h.broker.placeOrder(a.brokerAccountId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec(1),
      tag: `r${Math.random()}`,
    });
  const moveEurusd = (by: string) =>
    h.broker.setPrice('EURUSD', h.broker.quote('EURUSD').bid.plus(h.broker.quote('EURUSD').ask).div(2).plus(by));
  const riskEvents = async (accountId: string) =>
    (await h.store.events.after(h.userId, 0, 10_000)).filter(
      (e) => e.accountId === accountId && e.type === 'risk.triggered',
    );

  it('a drawdown breach pauses copying, with the reason in the account status and a risk.triggered event', async () => {
    const a = await h.account({ balance: 10_000 });
    await guard.setLimits(h.userId, 'account', a.id, { ...NO_LIMITS, maxDrawdownPercent: '5' });
    expect((await guard.sample(a))?.breach).toBeNull();
    buyOneLot(a);
    moveEurusd('-0.0070');
    const r = await guard.sample(a);
    expect(r?.breach?.rule).toBe('max_drawdown');
    const after = (await h.store.accounts.byId(a.id))!;
    expect(after).toMatchObject({ status: 'paused', statusReason: expect.stringContaining('risk max_drawdown') });
    const evs = await riskEvents(a.id);
    expect(evs).toHaveLength(1);
    expect(evs[0]!.payload).toMatchObject({ rule: 'max_drawdown', action: 'pause' });
    // The same breach does not act twice while the account is off.
    await guard.sample(after);
    expect(await riskEvents(a.id)).toHaveLength(1);
    moveEurusd('0.0070');
  });

  it('panic-close-and-pause mode: flattens the account and locks it', async () => {
    const a = await h.account({ balance: 10_000 });
    await guard.setLimits(h.userId, 'account', a.id, {
      ...NO_LIMITS,
      dailyLossLimit: '300',
      onBreach: 'close_and_pause',
    });
    await guard.sample(a);
    buyOneLot(a);
    moveEurusd('-0.0050');
    const r = await guard.sample(a);
    expect(r?.breach?.rule).toBe('daily_loss');
    const ev = (await riskEvents(a.id))[0]!;
    expect(ev.payload).toMatchObject({
      rule: 'daily_loss',
      action: 'close_and_pause',
      jobId: expect.stringMatching(/^job_/),
    });
    const job = await panic.wait((await panic.job(h.userId, (ev.payload as { jobId: string }).jobId))!, 10_000);
    expect(job.state).toBe('succeeded');
    expect(h.broker.positions(a.brokerAccountId)).toEqual([]);
    expect(await h.store.accounts.byId(a.id)).toMatchObject({
      status: 'locked',
      statusReason: expect.stringContaining('risk daily_loss'),
    });
    moveEurusd('0.0050');
  });

  it('the pre-trade hook shrinks a copy to the daily allowance at its stop, and skips it once the allowance is used', async () => {
    const a = await h.account({ balance: 10_000 });
    await guard.setLimits(h.userId, 'account', a.id, { ...NO_LIMITS, dailyLossLimit: '100', maxOpenVolume: '3' });
    const spec = (await (await h.adapters.forAccount(a)).instrument('EURUSD'))!;
    const ctx = {
      slave: a,
      symbol: 'EURUSD',
      side: 'buy' as const,
      type: 'market' as const,
      volume: dec(1),
      price: dec('1.10000'),
      stopLoss: dec('1.09800'),
      spec,
    };
    expect(await guard.check(ctx)).toEqual({ ok: true, volume: dec('0.5') });
    expect(await guard.check({ ...ctx, stopLoss: dec('1.09990') })).toEqual({ ok: true });
    // 1.5 lots now count as open: only 1.5 more fit under 3.
    expect(await guard.check({ ...ctx, volume: dec(2), stopLoss: null })).toEqual({ ok: true, volume: dec('1.5') });
    expect(await guard.check({ ...ctx, stopLoss: null })).toMatchObject({ ok: false, code: 'risk_max_open_volume' });
    // Another account that lost 100 today: nothing is left.
    const b = await h.account({ balance: 10_000 });
    await guard.setLimits(h.userId, 'account', b.id, { ...NO_LIMITS, dailyLossLimit: '100' });
    await guard.sample(b);
    const state = guard.row(b.id)!.state;
    state.lastEquity = new Decimal(state.dayStartEquity!).minus(100).toString();
    expect(await guard.check({ ...ctx, slave: b, volume: dec('0.01') })).toMatchObject({
      ok: false,
      code: 'risk_daily_loss',
    });
  });

  it("a group's limits apply to each of its Slaves, and the monitor's tick finds them", async () => {
    const g = await h.store.accounts.createGroup(h.userId, 'risky');
    const s = await h.account({ groupId: g.id, balance: 10_000 });
    await guard.setLimits(h.userId, 'group', g.id, { ...NO_LIMITS, maxOpenVolume: '0.5' });
    expect((await guard.watched()).map((x) => x.id)).toContain(s.id);
    buyOneLot(s);
    await guard.tick();
    expect(await h.store.accounts.byId(s.id)).toMatchObject({
      status: 'paused',
      statusReason: expect.stringContaining('max_open_volume'),
    });
  });
});
