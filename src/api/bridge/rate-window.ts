/**
 * A fixed one-minute window per client address: how many connects (WebSocket upgrades) or polls it may make.
 * Returns the seconds to wait when over the limit, or null when allowed. The map is cleared when it grows past
 * 10,000 addresses, so a spray of addresses cannot grow it without bound.
 */
export function perMinuteLimiter(perMinute: number, now: () => number): (key: string) => number | null {
  const windows = new Map<string, { start: number; count: number }>();
  return (key) => {
    const t = now();
    const w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      if (windows.size > 10_000) windows.clear();
      windows.set(key, { start: t, count: 1 });
      return null;
    }
    if (++w.count <= perMinute) return null;
    return Math.ceil((w.start + 60_000 - t) / 1000);
  };
}
