import { describe, expect, it } from 'vitest';
import { parseDuration, loadWebhookConfig } from '../config/webhooks-config.js';
import { parseRetryAfter, retryDelay } from './retry-schedule.js';

const policy = { scheduleMs: [0, 5_000, 300_000, 1_800_000], jitter: 0, maxRetryAfterMs: 86_400_000 };

describe('retry schedule', () => {
  it('follows the schedule, then repeats its last entry', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelay(n, policy))).toEqual([
      0, 5_000, 300_000, 1_800_000, 1_800_000, 1_800_000,
    ]);
  });

  it('spreads by at most +-jitter, and never below zero', () => {
    const p = { ...policy, jitter: 0.2 };
    expect(retryDelay(2, p, null, () => 0)).toBe(4_000);
    expect(retryDelay(2, p, null, () => 0.999999)).toBe(6_000);
    expect(retryDelay(1, p, null, () => 0)).toBe(0);
    for (let i = 0; i < 200; i++) {
      const d = retryDelay(3, p);
      expect(d).toBeGreaterThanOrEqual(240_000);
      expect(d).toBeLessThanOrEqual(360_000);
    }
  });

  it('takes Retry-After as a floor, capped', () => {
    expect(retryDelay(2, policy, 60_000)).toBe(60_000);
    expect(retryDelay(3, policy, 60_000)).toBe(300_000);
    expect(retryDelay(2, { ...policy, maxRetryAfterMs: 10_000 }, 999_999_000)).toBe(10_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });

  it('has the Standard Webhooks schedule by default and takes durations from the environment', () => {
    const cfg = loadWebhookConfig({});
    expect(cfg.retryScheduleMs).toEqual([0, 5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 864e5]);
    expect(cfg.failureWindowMs).toBe(5 * 86_400_000);
    expect(cfg.timeoutMs).toBe(15_000);
    expect(cfg.allowPrivateTargets).toBe(false);
    expect(loadWebhookConfig({ COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' }).allowPrivateTargets).toBe(true);
    expect(
      loadWebhookConfig({
        COPYTRADE_WEBHOOK_RETRY_SCHEDULE: '0,10ms,1s',
        COPYTRADE_WEBHOOK_ALLOW_PRIVATE_TARGETS: '0',
      }),
    ).toMatchObject({ retryScheduleMs: [0, 10, 1000], allowPrivateTargets: false });
    expect(parseDuration('1.5s', 'x')).toBe(1500);
    expect(() => parseDuration('soon', 'X')).toThrow(/X must be a duration/);
  });
});
