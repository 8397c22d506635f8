import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tryTake hands out the burst without a promise, then refuses until a token has refilled', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const b = new TokenBucket(2, 2);
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
    vi.advanceTimersByTime(499);
    expect(b.tryTake()).toBe(false);
    vi.advanceTimersByTime(1);
    expect(b.tryTake()).toBe(true);
  });

  it('tryTake never takes the token of a caller already waiting in take()', () => {
    // Only the clock is faked: the bucket's timer that hands the waiter its token is real and far off (one token
    // per 1000 s), so the clock can pass the refill before that timer runs, as on a busy event loop.
    vi.useFakeTimers({ toFake: ['performance'] });
    const b = new TokenBucket(0.001, 1);
    expect(b.tryTake()).toBe(true);
    let served = false;
    void b.take().then(() => {
      served = true;
    });
    vi.advanceTimersByTime(2_000_000);
    expect(b.tryTake()).toBe(false);
    expect(served).toBe(false);
  });
});
