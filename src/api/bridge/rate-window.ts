export interface MinuteLimiter {
  /** Counts one for `key`: the seconds to wait when that is over the limit, or null when allowed. */
  hit(key: string): number | null;
  /** The seconds to wait when `key` is over the limit already, without counting; null when not. */
  over(key: string): number | null;
}

/**
 * A fixed one-minute window per key (a client address, a token): how many connects (WebSocket upgrades), polls or
 * refused polls it may make. The map is cleared when it grows past 10,000 keys, so a spray of keys cannot grow it
 * without bound.
 */
export function perMinuteLimiter(perMinute: number, now: () => number): MinuteLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const current = (key: string, t: number) => {
    const w = windows.get(key);
    return w && t - w.start < 60_000 ? w : null;
  };
  const wait = (w: { start: number }, t: number) => Math.ceil((w.start + 60_000 - t) / 1000);
  return {
    hit(key) {
      const t = now();
      const w = current(key, t);
      if (!w) {
        if (windows.size > 10_000) windows.clear();
        windows.set(key, { start: t, count: 1 });
        return null;
      }
      return ++w.count <= perMinute ? null : wait(w, t);
    },
    over(key) {
      const t = now();
      const w = current(key, t);
      return w && w.count >= perMinute ? wait(w, t) : null;
    },
  };
}
