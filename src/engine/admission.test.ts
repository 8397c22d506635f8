import { describe, expect, it } from 'vitest';
import { assess, backloggedError, type SlaveBacklog } from './admission.js';
import { ThroughputMeter } from './admission-rate.js';

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
