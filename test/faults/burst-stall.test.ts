import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBurst } from '../helpers/burst.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The burst of test/faults/burst.test.ts on a starved machine, made deterministic: while the orders are sent,
 * the service's own event loop (it runs in this process) is held for STALL_MS out of every PERIOD_MS, longer
 * than the broker timeout. A broker answer then waits behind our stall, and a health read in flight times out
 * although the broker (here in-process too) answered in time. Seen on a machine at load 23-30: the health
 * monitor called healthy Slaves disconnected for it and 428-579 copies were skipped `slave_not_eligible`. A
 * serious copier never calls a broker down because *we* were slow (src/engine/health/monitor.ts).
 * One order goes first, unstalled, as a running service has already signed in to its Slaves' brokers and read
 * their instrument specs; the stall is about the health reads during the burst.
 *
 * What this asserts is the health half of issue 10 §5: no Slave is called disconnected and no copy is skipped
 * `slave_not_eligible`. Not yet asserted (printed in BURST_FIGURES): on this machine under load, writes that
 * timed out during the stall could stay `unresolved` past the test's wait (the settle loop's half of §5).
 */
const ORDERS = 100;
const STALL_MS = 1_600;
const PERIOD_MS = 4_000;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { COPYTRADE_HEALTH_INTERVAL_MS: '500', COPYTRADE_BROKER_TIMEOUT_MS: '1500' } });
}, 300_000);
afterAll(async () => {
  await svc?.close();
}, 180_000);

/** Holds the event loop for STALL_MS every PERIOD_MS until stopped: a bounded, in-process CPU starvation. */
function stallLoop(): () => void {
  const t = setInterval(() => {
    const end = performance.now() + STALL_MS;
    while (performance.now() < end) {
      // spinning on purpose: this is the stall
    }
  }, PERIOD_MS - STALL_MS);
  return () => clearInterval(t);
}

describe('a burst of orders while our own event loop is starved', () => {
  it(`${ORDERS} orders: no Slave is called down for our stall, so no copy is skipped as not eligible`, {
    timeout: 900_000,
  }, async () => {
    await runBurst(svc, 1, 'warm-up');
    const stop = stallLoop();
    try {
      // The stall lasts through the sending and ends once every order is answered, so the settling can finish.
      const r = await runBurst(svc, ORDERS, 'stalled', { onSent: stop, assertAll: false, settleTimeoutMs: 60_000 });
      expect(r.statusChanges.filter((c) => c.after === 'disconnected')).toEqual([]);
      expect(Object.keys(r.tally).filter((k) => k.includes('slave_not_eligible'))).toEqual([]);
    } finally {
      stop();
    }
  });
});
