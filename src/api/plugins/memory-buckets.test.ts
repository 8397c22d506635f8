import { describe, expect, it } from 'vitest';
import { MemoryBuckets } from './memory-buckets.js';

describe('in-memory token buckets (embedded store)', () => {
  it('serves the quota as a burst, refuses the next, refills evenly over the window, never above the quota', async () => {
    let now = 1_000_000;
    const b = new MemoryBuckets(() => now);
    const p = { quota: 3, windowSec: 3 };
    const got = [];
    for (let i = 0; i < 4; i++) got.push((await b.take('k', p)).allowed);
    expect(got).toEqual([true, true, true, false]);
    now += 999;
    expect((await b.take('k', p)).allowed).toBe(false);
    now += 1;
    expect(await b.take('k', p)).toEqual({ allowed: true, tokens: 0 });
    now += 60_000;
    expect(await b.take('k', p)).toEqual({ allowed: true, tokens: 2 });
    // Cost 0 (panic-close) is always served and takes nothing.
    for (let i = 0; i < 5; i++) await b.take('k', p);
    expect(await b.take('k', p, 0)).toMatchObject({ allowed: true });
    expect((await b.take('other', p)).tokens).toBe(2);
    await b.purgeIdle(new Date(now + 1));
    expect((await b.take('k', p)).tokens).toBe(2);
  });
});
