import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttl-cache.js';

describe('the history read cache', () => {
  it('shares one read per key while fresh, reads again once stale, keeps no failure, drops the oldest at max', async () => {
    let now = 0;
    let reads = 0;
    const cache = new TtlCache<number>(1000, 2, () => now);
    const load = async () => ++reads;
    expect(await Promise.all([cache.get('a', load), cache.get('a', load)])).toEqual([1, 1]);
    now = 999;
    expect(await cache.get('a', load)).toBe(1);
    now = 1000;
    expect(await cache.get('a', load)).toBe(2);
    await expect(cache.get('b', () => Promise.reject(new Error('broker down')))).rejects.toThrow('broker down');
    expect(await cache.get('b', load)).toBe(3);
    expect(await cache.get('c', load)).toBe(4);
    // 'a' was the oldest of a, b, c with room for two.
    expect(await cache.get('a', load)).toBe(5);
  });
});
