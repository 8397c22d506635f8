import { WorkClaims } from './work-claims.js';
import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.js';
import { withDefaults } from '../domain/copy-rule.js';
import { testAccount } from '../../test/helpers/account.js';
import { Admission, assess, backloggedError, type SlaveBacklog } from './admission.js';
import { ThroughputMeter } from './admission-rate.js';
import { RetryHolds } from './rate-limit.js';
import type { Store } from '../store/store.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';

const slave = (over: Partial<SlaveBacklog> = {}): SlaveBacklog => ({
  accountId: 'acc_b1',
  name: 'B Slave',
  maxDelayMs: 60_000,
  queued: 0,
  unsettled: 0,
  oldestUnsettledMs: null,
  ratePerSec: 10,
  ...over,
});

describe('assess: backlog / rate against the staleness budget', () => {
  it('admits while twice the queue drains inside maxDelayMs, refuses past it', () => {
    // 10/s, 60 s, safety 2: 299 queued + the new one = 300 writes = 60 s of (doubled) wait: still in.
    expect(assess(slave({ queued: 299 }))).toBeNull();
    const r = assess(slave({ queued: 300 }));
    expect(r).toMatchObject({ accountId: 'acc_b1', estimatedWaitMs: 60_200, budgetMs: 60_000, retryAfterSec: 1 });
  });

  it('counts an unsettled copy as a lookup and a resend, and spends the budget its age took', () => {
    // 100 unsettled = 200 writes + 1 = 40.2 s of wait; the oldest is 30 s old, so 30 s are left.
    const r = assess(slave({ unsettled: 100, oldestUnsettledMs: 30_000 }));
    expect(r).not.toBeNull();
    expect(r!.budgetMs).toBe(30_000);
    // The excess (10.2 s of doubled wait) drains in 5.1 s at the real rate.
    expect(r!.retryAfterSec).toBe(6);
    expect(assess(slave({ unsettled: 100, oldestUnsettledMs: 10_000 }))).toBeNull();
  });

  it("counts copies waiting out a broker's 429 as queued, and the broker's hold as time nobody can send", () => {
    // 10/s, 60 s: 200 queued + 1 = 40.2 s; 50 more retrying copies make it 50.2 s: still in.
    expect(assess(slave({ queued: 200, retrying: 50 }))).toBeNull();
    // The broker asked to wait 15 s more: 65.2 s against 60 s. The 5.2 s of excess lies in the hold, which passes
    // with the clock (not at the doubled estimate's pace): Retry-After 6 s.
    const r = assess(slave({ queued: 200, retrying: 50, heldForMs: 15_000 }));
    expect(r).toMatchObject({ retryingWrites: 50, heldForMs: 15_000, estimatedWaitMs: 65_200, retryAfterSec: 6 });
    // A hold alone, past the budget: the excess is the hold's overrun.
    expect(assess(slave({ heldForMs: 70_000 }))).toMatchObject({ retryAfterSec: 11 });
    expect(backloggedError([r!]).message).toContain('(its broker asked to wait 15 s more)');
  });

  it('a slower measured rate refuses sooner', () => {
    expect(assess(slave({ queued: 100, ratePerSec: 10 }))).toBeNull();
    expect(assess(slave({ queued: 100, ratePerSec: 2 }))?.retryAfterSec).toBe(21);
  });

  it('never blocks the Master for a rule no idle connection could meet', () => {
    expect(assess(slave({ maxDelayMs: 100, ratePerSec: 2, queued: 1000 }))).toBeNull();
    expect(assess(slave({ maxDelayMs: 0, queued: 5 }))).toBeNull();
  });

  it('the error names every backlogged Slave and waits for the slowest', () => {
    const a = assess(slave({ queued: 400 }))!;
    const b = assess(slave({ accountId: 'acc_a', name: 'A Slave', ratePerSec: 5, queued: 400 }))!;
    const err = backloggedError([a, b]);
    expect(err.code).toBe('slaves_backlogged');
    expect(err.retryAfter).toBe(Math.max(a.retryAfterSec, b.retryAfterSec));
    expect(err.retryAfter).toBe(51);
    expect(err.message).toContain('"B Slave" (acc_b1)');
    expect(err.message).toContain('"A Slave" (acc_a)');
    expect(err.message).toContain('retry in 51 s');
    expect(err.details).toEqual({ retryAfter: 51, slaves: [a, b] });
  });
});

describe('ThroughputMeter', () => {
  it('measures answers per second only while writes wait, and forgets an old measure', () => {
    let now = 0;
    const m = new ThroughputMeter(() => now);
    m.answered('a', 3);
    for (let i = 0; i < 4; i++) {
      now += 200;
      m.answered('a', 3);
    }
    expect(m.ratePerSec('a')).toBeNull(); // 4 intervals: not yet trusted
    now += 200;
    m.answered('a', 0);
    expect(m.ratePerSec('a')).toBeCloseTo(5, 5);
    // The queue ran dry: the idle gap before the next answer is no measure of the pace.
    now += 10_000;
    m.answered('a', 2);
    expect(m.ratePerSec('a')).toBeCloseTo(5, 5);
    now += 30_000;
    expect(m.ratePerSec('a')).toBeNull();
  });
});

describe('Admission.admit: what the engine knows of each eligible Slave', () => {
  const now = 1_000_000;
  const master = testAccount('m', { role: 'master' });
  const fast = testAccount('fast', { name: 'Fast' });
  const slow = testAccount('slow', { name: 'Slow' });
  const down = testAccount('down', { status: 'disconnected' });
  const setup = (o: {
    queued: Record<string, number>;
    unsettled?: Array<{ slave: string; ageMs: number; id?: string }>;
    retrying?: RetryHolds;
  }) => {
    const store = {
      accounts: {
        slavesOfGroup: async () =>
          [fast, slow, down].map((account) => ({ account, rule: withDefaults({ maxDelayMs: 10_000 }) })),
      },
      trades: {
        unsettledIntents: async () =>
          (o.unsettled ?? []).map((u, i) => ({
            intent: { id: u.id ?? `int_${i}`, slaveAccountId: u.slave },
            trade: { actionAt: new Date(now - u.ageMs), createdAt: new Date(now - u.ageMs) },
          })),
      },
    } as unknown as Store;
    const adapters = {
      forAccount: async () => ({ capabilities: { rateLimitPerSecond: 5 } }),
    } as unknown as AdapterRegistry;
    const engine = {
      clock: () => now,
      claims: (() => {
        const c = new WorkClaims();
        c.holdIntents(['int_busy']);
        return c;
      })(),
      dispatcher: { load: (id: string) => ({ queued: o.queued[id] ?? 0, ratePerSec: 5 }) },
      retrying: o.retrying ?? new RetryHolds(),
    } as unknown as CopyEngine;
    return new Admission(store, adapters, engine);
  };

  it('admits while every eligible Slave keeps up, and ignores a Slave that is not eligible', async () => {
    // 5/s, 10 s, safety 2: 24 queued + 1 = 10 s: in. The disconnected Slave's queue does not count.
    await expect(setup({ queued: { fast: 24, slow: 24, down: 1000 } }).admit(master)).resolves.toBeUndefined();
  });

  it('refuses with 429 slaves_backlogged naming only the backlogged Slave', async () => {
    const err = await setup({ queued: { fast: 3, slow: 40 } })
      .admit(master)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('slaves_backlogged');
    // 41 writes doubled at 5/s = 16.4 s against 10 s: 6.4 s of excess drains in 3.2 s.
    expect((err as AppError).retryAfter).toBe(4);
    expect((err as AppError).message).toContain('"Slow" (slow)');
    expect((err as AppError).message).not.toContain('"Fast"');
  });

  it("refuses while a Slave's broker holds its copies past the rule's budget, and admits once the hold ends", async () => {
    const retrying = new RetryHolds();
    let release!: () => void;
    // One copy of Slow waits out a 429 whose Retry-After ends 9 s from now: 9 s + (1 + 1) doubled at 5/s = 9.8 s.
    const held = retrying.wait('slow', now + 9_000, () => new Promise<void>((r) => (release = r)));
    expect(retrying.of('slow', now)).toEqual({ waiting: 1, heldForMs: 9_000 });
    await expect(setup({ queued: { slow: 0 }, retrying }).admit(master)).resolves.toBeUndefined();
    // With 2 writes queued besides: 9 s + 4 writes doubled = 10.6 s against 10 s.
    await expect(setup({ queued: { slow: 2 }, retrying }).admit(master)).rejects.toMatchObject({
      code: 'slaves_backlogged',
      message: expect.stringContaining('its broker asked to wait 9 s more'),
    });
    release();
    await held;
    expect(retrying.of('slow', now)).toEqual({ waiting: 0, heldForMs: 0 });
    await expect(setup({ queued: { slow: 2 }, retrying }).admit(master)).resolves.toBeUndefined();
  });

  it('counts fresh unsettled copies (not those on the wire, not those already stale) and their age', async () => {
    const unsettled = [
      ...Array.from({ length: 6 }, () => ({ slave: 'fast', ageMs: 6_000 })),
      { slave: 'fast', ageMs: 1_000, id: 'int_busy' },
      { slave: 'fast', ageMs: 60_000 },
    ];
    // 6 fresh unsettled = 12 writes + 1 = 5.2 s of wait, but the oldest left only 4 s: refused.
    await expect(setup({ queued: {}, unsettled }).admit(master)).rejects.toMatchObject({ code: 'slaves_backlogged' });
    // Younger, the same backlog fits.
    const young = unsettled.map((u) => (u.ageMs === 6_000 ? { ...u, ageMs: 2_000 } : u));
    await expect(setup({ queued: {}, unsettled: young }).admit(master)).resolves.toBeUndefined();
  });
});
