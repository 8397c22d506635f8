import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/cli-process.js';
import { auditCopies } from '../helpers/copy-audit.js';
import { type Deployment, startDeployment } from '../helpers/deployment.js';
import {
  type FlowingDeployment,
  type LedgerProbe,
  type MasterFlow,
  startFlowingDeployment,
} from '../helpers/master-flow.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { requirePostgres } from '../helpers/postgres.js';

const ready = (await requirePostgres()) && (await requireNats());

/** Long enough that a handover faster than it can only come from the stopping worker releasing its leases. */
const TTL_MS = 10_000;

/**
 * A rolling restart as an operator does one: SIGTERM one worker, start it again, wait until it is ready, then the
 * other, under the same flow of Master activity as the chaos test. Nothing is lost or doubled, and each handover
 * is faster than the lease TTL (the stopping worker drains and releases its leases).
 */
describe.runIf(ready)('rolling restart of both workers under a steady flow', () => {
  let fd: FlowingDeployment | undefined;
  let d: Deployment;
  let probe: LedgerProbe;
  let flow: MasterFlow;

  beforeAll(async () => {
    fd = await startFlowingDeployment(
      () => startDeployment({ natsUrl: NATS_URL, leaseTtlMs: TTL_MS, slavesPerPlatform: 7 }),
      { workers: 2 },
    );
    ({ d, probe, flow } = fd);
  }, 120_000);

  afterAll(async () => fd?.close());

  it('SIGTERM, restart and wait ready, one worker after the other: every copy made once, handovers within the TTL', async () => {
    flow.start();
    await until('copies flowing', async () => (await probe.copiedSince(new Date(0))) > 0, 45_000);
    const handovers: number[] = [];
    const flowingAfter: number[] = [];
    for (const old of [...d.workers.keys()]) {
      const since = new Date();
      const t0 = performance.now();
      await d.stopWorker(old, 'SIGTERM');
      // Its sibling holds the Master: released at the stop, not left to run out.
      await until('the sibling holding the Master', async () => !!(await d.masterOwner()), 30_000);
      handovers.push(performance.now() - t0);
      const restarted = d.startWorker();
      await until('copies flowing after the stop', async () => (await probe.copiedSince(since)) > 0, 60_000);
      flowingAfter.push(performance.now() - t0);
      // Started and ready (its first lease round taken) before the next one goes.
      await restarted;
    }
    await flow.stop();
    const audit = await auditCopies(d, probe, 90_000);
    console.log(
      `rolling restart: SIGTERM -> Master held by the sibling ${handovers.map(Math.round).join(', ')} ms, ` +
        `-> copies flowing ${flowingAfter.map(Math.round).join(', ')} ms (TTL ${TTL_MS} ms), ` +
        `flow ${JSON.stringify(flow.counts)}, audit ${JSON.stringify({ ...audit, offRule: audit.offRule.length })}`,
    );
    expect(flow.errors).toEqual([]);
    expect(audit.unfinished).toEqual([]);
    expect(audit.doubleRows).toEqual([]);
    expect(audit.missingRows).toEqual([]);
    expect(audit.duplicateTags).toEqual([]);
    expect(audit.unexplained).toEqual([]);
    expect(audit.offRule).toEqual([]);
    expect(audit.confirmed).toBeGreaterThan(20);
    for (const ms of handovers) expect(ms).toBeLessThan(TTL_MS);
  }, 300_000);
});
