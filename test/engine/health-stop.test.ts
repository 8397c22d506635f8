import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HealthMonitor } from '../../src/engine/health/monitor.js';
import { engineHarness, type EngineHarness } from './harness.js';

let h: EngineHarness;

beforeEach(async () => {
  h = await engineHarness();
  for (let i = 0; i < 3; i++) await h.account({ role: 'slave' });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

describe('stopping the health monitor during a spread round', () => {
  it('returns once the slice under way is done, without waiting for the next slice time', async () => {
    // One account a slice over ten minutes: the next slice is due minutes after the first.
    const monitor = new HealthMonitor(h.store, h.adapters, {
      intervalMs: 600_000,
      staleAfterMs: 30_000,
      checkTimeoutMs: 5_000,
      sliceSize: 1,
      loopStalledMs: () => 0,
    });
    const apply = h.store.accounts.applyHealth.bind(h.store.accounts);
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let writes = 0;
    vi.spyOn(h.store.accounts, 'applyHealth').mockImplementation(async (rows) => {
      writes += 1;
      await held;
      return apply(rows);
    });
    monitor.start(0);
    // The first slice is writing its health: stop() comes while no pause is under way to be woken.
    await expect.poll(() => writes, { timeout: 20_000 }).toBe(1);
    let stopped = false;
    const stopping = monitor.stop().then(() => {
      stopped = true;
    });
    release();
    // Before: the round went on into its pause until the next slice's time (minutes) and stop() waited for it.
    await expect.poll(() => stopped, { timeout: 10_000 }).toBe(true);
    await stopping;
    expect(writes).toBe(1);
  }, 60_000);
});
