import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { Account } from '../../src/domain/account.js';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import { engineHarness, type EngineHarness } from './harness.js';

/**
 * At 10,000 accounts a health round must not be 20,000 statements nor empty the account cache that every copy
 * reads: its writes go one statement per slice, and the cached accounts are replaced, not thrown away.
 */
let h: EngineHarness;
let accs: Account[];

beforeEach(async () => {
  h = await engineHarness();
  accs = [];
  for (let i = 0; i < 5; i++) accs.push(await h.account({ role: 'slave' }));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

describe('health writes in batches, the account cache kept', () => {
  it('applyHealth writes health and funds of many accounts in one call and updates the cached list in place', async () => {
    const before = await h.store.accounts.list(h.userId);
    const checkedAt = new Date(1_700_000_000_000).toISOString();
    const health = { ...before[0]!.health, state: 'degraded' as const, checkedAt, lastError: 'slow' };
    await h.store.accounts.applyHealth([
      { id: accs[0]!.id, health, funds: { balance: dec('123.45'), equity: dec('120') } },
      { id: accs[1]!.id, health, funds: null },
    ]);
    const after = await h.store.accounts.list(h.userId);
    // Untouched accounts are the very objects cached before: the list was not read again.
    for (const i of [2, 3, 4])
      expect(after.find((a) => a.id === accs[i]!.id)).toBe(before.find((a) => a.id === accs[i]!.id));
    const a0 = after.find((a) => a.id === accs[0]!.id)!;
    expect(a0.health).toMatchObject({ state: 'degraded', checkedAt, lastError: 'slow' });
    expect(a0.balance?.toString()).toBe('123.45');
    expect(a0.equity?.toString()).toBe('120');
    // No funds read: the stored ones stay.
    expect(after.find((a) => a.id === accs[1]!.id)!.balance?.toString()).toBe('10000');
    // And the database agrees with the cache.
    const row = (await h.store.accounts.byId(accs[0]!.id))!;
    expect(row.health).toEqual(a0.health);
    expect(row.balance?.toString()).toBe('123.45');
    expect((await h.store.accounts.byId(accs[1]!.id))!.health.checkedAt).toBe(checkedAt);
  });

  it('a status change replaces the cached account too', async () => {
    const before = await h.store.accounts.list(h.userId);
    expect(await h.store.accounts.setStatusIf(accs[0]!.id, 'connected', 'disconnected', 'gone')).toBe(true);
    const after = await h.store.accounts.list(h.userId);
    expect(after.find((a) => a.id === accs[0]!.id)).toMatchObject({ status: 'disconnected', statusReason: 'gone' });
    expect(after.find((a) => a.id === accs[1]!.id)).toBe(before.find((a) => a.id === accs[1]!.id));
  });

  it('a round writes one statement per slice and no per-account update', async () => {
    const apply = vi.spyOn(h.store.accounts, 'applyHealth');
    const setHealth = vi.spyOn(h.store.accounts, 'setHealth');
    const setFunds = vi.spyOn(h.store.accounts, 'setFunds');
    const m = new HealthMonitor(h.store, h.adapters, {
      intervalMs: 60_000,
      staleAfterMs: 30_000,
      checkTimeoutMs: 5_000,
      sliceSize: 2,
    });
    await m.checkAll();
    expect(apply).toHaveBeenCalledTimes(3);
    expect(apply.mock.calls.map((c) => c[0].length)).toEqual([2, 2, 1]);
    expect(setHealth).not.toHaveBeenCalled();
    expect(setFunds).not.toHaveBeenCalled();
    for (const a of await h.store.accounts.list(h.userId))
      expect(a.health).toMatchObject({ state: 'ok', connected: true });
  });

  it('a scheduled round spreads its slices over the interval', async () => {
    // When the round began (its count of live accounts is read right after) and when each slice was read: a
    // slice's own store and broker reads may take long on a busy machine, so they are not part of the measure.
    let began = 0;
    const at: number[] = [];
    const count = h.store.accounts.countLive.bind(h.store.accounts);
    vi.spyOn(h.store.accounts, 'countLive').mockImplementation(async () => {
      if (began === 0) began = Date.now();
      return count();
    });
    const page = h.store.accounts.livePage.bind(h.store.accounts);
    vi.spyOn(h.store.accounts, 'livePage').mockImplementation(async (after, size) => {
      at.push(Date.now());
      return page(after, size);
    });
    const intervalMs = 400;
    const m = new HealthMonitor(h.store, h.adapters, {
      intervalMs,
      staleAfterMs: 30_000,
      checkTimeoutMs: 5_000,
      sliceSize: 1,
    });
    m.start(0);
    await vi.waitFor(() => expect(at.length).toBeGreaterThanOrEqual(5), { timeout: 20_000, interval: 20 });
    await m.stop();
    // Five or more slices over 400 ms: slice k starts k/slices of the interval into the round, never earlier.
    const slices = await count();
    expect(slices).toBeGreaterThanOrEqual(5);
    expect(at[4]! - began).toBeGreaterThanOrEqual(Math.floor((4 * intervalMs) / slices) - 1);
  });
});

describe('a round longer than its interval', () => {
  it('says so once, with its length and pace; a round that fits says nothing', async () => {
    const long = vi.fn();
    // One slice per account over 1 ms: every round overruns its interval.
    const slow = new HealthMonitor(h.store, h.adapters, {
      intervalMs: 1,
      staleAfterMs: 30_000,
      checkTimeoutMs: 5_000,
      sliceSize: 1,
      onLongRound: long,
    });
    const apply = vi.spyOn(h.store.accounts, 'applyHealth');
    slow.start(0);
    // Three rounds or more (five slices each) ran, then only the first overrun was reported.
    await vi.waitFor(() => expect(apply.mock.calls.length).toBeGreaterThanOrEqual(15), {
      timeout: 20_000,
      interval: 20,
    });
    await slow.stop();
    expect(long).toHaveBeenCalledTimes(1);
    const r = long.mock.calls[0]![0];
    expect(r).toMatchObject({ accounts: 5, intervalMs: 1 });
    expect(r.ms).toBeGreaterThan(1);
    expect(r.perSecond).toBeCloseTo((5 * 1000) / r.ms, 0);

    const fits = vi.fn();
    const quick = new HealthMonitor(h.store, h.adapters, {
      intervalMs: 60_000,
      staleAfterMs: 30_000,
      checkTimeoutMs: 5_000,
      onLongRound: fits,
    });
    apply.mockClear();
    quick.start(0);
    await vi.waitFor(() => expect(apply).toHaveBeenCalledTimes(1), { timeout: 20_000, interval: 20 });
    await quick.stop();
    expect(fits).not.toHaveBeenCalled();
  });
});
