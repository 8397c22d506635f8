import { afterEach, describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/simulator/broker.js';
import { startEngine, type EngineHarness } from './copy-harness.js';

let h: EngineHarness;
afterEach(async () => h?.close());

/**
 * Seen in CI: the store closed under a running service (its readiness test), and the settle loop's next pass
 * failed. The caller of that pass got the error, but a second promise made from the same pass (the one stop()
 * waits for) was left rejected with no handler: an unhandled rejection, which ends a Node process by default.
 */
describe('a settle pass that fails because the store cannot answer', () => {
  it('fails its caller only: no unhandled rejection, and stop() still resolves', async () => {
    const broker = new SimBroker({ seed: 7 });
    h = await startEngine({ broker });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await h.store.close();
      await expect(h.settler.runOnce({ graceMs: 0 })).rejects.toThrow(/store is closed|Failed query/);
      // A rejection is reported unhandled once the microtask queue drains after it: a macrotask turn is enough.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      await h.settler.stop();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
