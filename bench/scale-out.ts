// Scale-out figures (issue 11): failover time over SIGKILLs, and copy throughput with one and two workers.
// `npm run bench scale-out` (needs PostgreSQL and NATS on 127.0.0.1, like the scale-out tests).
import pg from 'pg';
import { accountLeaseKey } from '../src/domain/lease.js';
import { killStarted, until } from '../test/helpers/cli-process.js';
import { type Deployment, startDeployment } from '../test/helpers/deployment.js';
import { LedgerProbe, MasterFlow } from '../test/helpers/master-flow.js';
import { NATS_URL } from '../test/helpers/nats.js';
import { percentile, report, rssMb, type Row } from './lib.js';

const KILLS = Number(process.env.BENCH_FAILOVER_KILLS ?? 6);
const TTL_MS = Number(process.env.BENCH_LEASE_TTL_MS ?? 3000);
const ORDERS_PER_MASTER = Number(process.env.BENCH_BURST_ORDERS ?? 8);

const FINAL = ['confirmed', 'rejected', 'skipped', 'denied'];

/** SIGKILL of the Master's owner -> an action made after the kill fully copied, under the steady flow. */
async function failover(d: Deployment, probe: LedgerProbe): Promise<number[]> {
  const apiBase = await d.startApi();
  const flow = new MasterFlow(d, apiBase, probe);
  await d.startWorker();
  await d.startWorker();
  flow.start();
  await until('copies flowing', async () => (await probe.copiedSince(new Date(0))) > 0, 60_000);
  const out: number[] = [];
  for (let i = 0; i < KILLS; i++) {
    const owner = (await d.masterOwner())!;
    const since = new Date();
    const t0 = performance.now();
    await d.stopWorker(owner, 'SIGKILL');
    await until('copies flowing again', async () => (await probe.copiedSince(since)) > 0, 120_000);
    out.push(performance.now() - t0);
    await d.startWorker();
  }
  await flow.stop();
  return out;
}

/**
 * A burst of orders through the api onto every Master of the deployment at once; copies confirmed per second from
 * the first order sent to the last copy final. Masters are served one order at a time each, so a second worker
 * can only help when it holds other Masters than the first.
 */
async function burst(d: Deployment, apiBase: string, db: pg.Pool): Promise<{ copies: number; ms: number }> {
  const masters = (await d.store.accounts.all()).filter((a) => a.role === 'master').map((a) => a.id);
  const t0 = performance.now();
  const since = new Date();
  await Promise.all(
    masters.map(async (m) => {
      for (let i = 0; i < ORDERS_PER_MASTER; i++) {
        // 503: the worker taking the Master over has not served its orders yet (a start, a release); sent again.
        for (let tries = 0; ; tries++) {
          const res = await fetch(`${apiBase}/v1/accounts/${m}/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ symbol: 'EURUSD', side: 'buy', volume: 0.02 }),
          });
          const text = await res.text();
          if (res.status === 202) break;
          if (res.status !== 503 || tries > 100) throw new Error(`burst order answered ${res.status}: ${text}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }),
  );
  const q = `select count(*) filter (where ci.state = 'confirmed')::int confirmed,
      count(*) filter (where ci.state <> all($2))::int open
    from copy_intents ci join trades t on t.id = ci.trade_id where t.created_at >= $1`;
  let copies = 0;
  await until(
    'the burst copied',
    async () => {
      const r = (await db.query(q, [since, FINAL])).rows[0] as { confirmed: number; open: number };
      copies = r.confirmed;
      return r.open === 0 && r.confirmed > 0;
    },
    120_000,
  );
  return { copies, ms: performance.now() - t0 };
}

export async function benchScaleOut(): Promise<void> {
  const rows: Row[] = [];
  let d: Deployment | undefined;
  try {
    // Failover over KILLS SIGKILLs of the Master's owner.
    d = await startDeployment({ natsUrl: NATS_URL, leaseTtlMs: TTL_MS, slavesPerPlatform: 7 });
    const probe = new LedgerProbe(d.roleEnv.DATABASE_URL!, d.masterId);
    const times = (await failover(d, probe)).sort((a, b) => a - b);
    rows.push(
      {
        measure: `failover: SIGKILL -> copies flowing, p50 (ms, TTL ${TTL_MS} ms, ${times.length} kills)`,
        value: Math.round(percentile(times, 50)),
      },
      { measure: 'failover: max (ms)', value: Math.round(times.at(-1)!) },
      { measure: 'failover: each (ms)', value: times.map(Math.round).join(' ') },
    );
    // Throughput: the same burst with one worker, then with a second one added (handed its share by the first).
    for (const id of [...d.workers.keys()]) await d.stopWorker(id, 'SIGTERM');
    const db = new pg.Pool({ connectionString: d.roleEnv.DATABASE_URL!, max: 2 });
    const apiBase = await d.startApi();
    const one = await d.startWorker();
    const rssOne = rssMb(d.workers.get(one)!.pid!);
    const single = await burst(d, apiBase, db);
    // A second worker added beside the first (which holds everything): the first hands it its share.
    const all = await d.store.accounts.all();
    const masterKeys = new Set(all.filter((a) => a.role === 'master').map((a) => accountLeaseKey(a.id)));
    const otherKeys = new Set(all.filter((a) => a.role !== 'master').map((a) => accountLeaseKey(a.id)));
    const t0 = performance.now();
    const second = await d.startWorker();
    const startMs = performance.now() - t0;
    const counts = async (keys: Set<string>) => {
      const live = (await d!.store.leases.live()).filter((l) => keys.has(l.key));
      return [one, second].map((w) => live.filter((l) => l.owner === w).length);
    };
    const fair = (c: number[], n: number) => c[0]! + c[1]! === n && Math.abs(c[0]! - c[1]!) <= 1;
    let masters: number[] = [];
    let others: number[] = [];
    await until(
      'the second worker holding its share',
      async () => {
        masters = await counts(masterKeys);
        others = await counts(otherKeys);
        return fair(masters, masterKeys.size) && fair(others, otherKeys.size);
      },
      120_000,
    );
    const shareMs = performance.now() - t0;
    const double = await burst(d, apiBase, db);
    rows.push(
      {
        measure: `burst: ${ORDERS_PER_MASTER} orders on each of ${masterKeys.size} Masters, 1 worker (copies/s)`,
        value: (single.copies / (single.ms / 1000)).toFixed(1),
      },
      { measure: '  copies, ms (1 worker)', value: `${single.copies} in ${Math.round(single.ms)}` },
      { measure: '2 workers (copies/s)', value: (double.copies / (double.ms / 1000)).toFixed(1) },
      { measure: '  copies, ms (2 workers)', value: `${double.copies} in ${Math.round(double.ms)}` },
      { measure: '  Masters per worker (first / second)', value: masters.join(' / ') },
      { measure: '  other accounts per worker (first / second)', value: others.join(' / ') },
      { measure: 'second worker start (ms, to instanceId printed)', value: Math.round(startMs) },
      {
        measure: `second worker started -> both at their fair share (ms, TTL ${TTL_MS} ms)`,
        value: Math.round(shareMs),
      },
      { measure: 'worker RSS holding every lease (MB)', value: Math.round(rssOne) },
    );
    await db.end();
    await probe.close();
  } finally {
    killStarted();
    await d?.close();
    report('scale-out', rows, { ttlMs: TTL_MS, kills: KILLS, ordersPerMaster: ORDERS_PER_MASTER });
  }
}
