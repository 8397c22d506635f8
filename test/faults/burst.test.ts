import { afterAll, beforeAll, describe, it } from 'vitest';
import { runBurst } from '../helpers/burst.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * 200 orders sent to the demo Master as fast as a client with 8 connections can: every Slave on every
 * platform shares its broker connection's rate limits between the copies, the health monitor's reads and the
 * settle loop's lookups. Admission control (src/engine/admission.ts) answers an order 429 slaves_backlogged
 * when a copy of it would outlive a Slave's maxDelayMs in that Slave's backlog. So every request is either
 * accepted (202) and then every healthy Slave's copy of it ends confirmed, or refused at the API with the
 * code, Retry-After and the Slaves named: no copy is lost to pressure (never "not eligible" because a busy
 * broker was read as down, never "too old" because it waited in a queue or for a slow settle).
 * test/faults/burst-stall.test.ts runs the same burst while the service's own event loop is starved.
 */
const ORDERS = 200;
let svc: TestService;

beforeAll(async () => {
  // Health rounds every 500 ms during the burst, a broker timeout short enough to time writes out under pacing.
  svc = await startTestService({ env: { COPYTRADE_HEALTH_INTERVAL_MS: '500', COPYTRADE_BROKER_TIMEOUT_MS: '1500' } });
}, 300_000);
afterAll(async () => {
  await svc?.close();
}, 180_000);

describe('a burst of orders to one Master', () => {
  it(`${ORDERS} orders: each accepted with every healthy Slave's copy confirmed, or refused 429 with a reason`, {
    timeout: 900_000,
  }, async () => {
    await runBurst(svc, ORDERS, 'plain');
  });
});
