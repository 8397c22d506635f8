import { describe, expect, it } from 'vitest';
import { loopStalledMs } from './loop-lag.js';

const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // holding the event loop on purpose
  }
};

describe('our own event-loop stall', () => {
  it('counts a stall while it is going on and after it, and never decreases', async () => {
    const before = loopStalledMs();
    spin(300);
    const during = loopStalledMs();
    // A busy machine only adds stall: at least the 300 ms held here (less one tick's period) is counted.
    expect(during - before).toBeGreaterThanOrEqual(200);
    await new Promise<void>((r) => setImmediate(r));
    expect(loopStalledMs()).toBeGreaterThanOrEqual(during);
  });
});
