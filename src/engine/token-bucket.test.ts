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

  it('take() queues even when a token has refilled, so a later tryTake cannot write before it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const b = new TokenBucket(1, 1);
    expect(b.tryTake()).toBe(true);
    // A's tryTake found none; by its take() a token is back. Before A resumes, the clock passes another refill.
    vi.advanceTimersByTime(1000);
    const order: string[] = [];
    const a = b.take().then(() => order.push('a'));
    vi.advanceTimersByTime(1000);
    expect(b.tryTake()).toBe(false);
    const later = b.take().then(() => order.push('b'));
    await a;
    vi.advanceTimersByTime(1000);
    await later;
    expect(order).toEqual(['a', 'b']);
  });

  it('serves waiters in the order they came, one per refill', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const b = new TokenBucket(10, 1);
    expect(b.tryTake()).toBe(true);
    const order: number[] = [];
    const all = [0, 1, 2].map((k) => b.take().then(() => order.push(k)));
    await vi.advanceTimersByTimeAsync(99);
    expect(order).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual([0]);
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2]);
  });
});
