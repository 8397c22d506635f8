import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/store/store.js';
import { AuthService } from '../src/auth/auth-service.js';
import { SimBroker } from '../src/simulator/broker.js';
import { SimPersistence } from '../src/simulator/persistence.js';
import { packageRoot } from '../src/config/package-root.js';
import { describeRuntime, serviceRuntime } from './deploy-runtime.js';
import { percentile, report, rssMb, waitFor200 } from './lib.js';

const ACCOUNTS = Number(process.env.BENCH_SCALE_ACCOUNTS ?? 10_000);
const GROUPS = 100;
const HEALTH_MS = 10_000;
/** Long enough for the first health round (1.5 s after start) and the whole of its interval. */
const WINDOW_MS = 13_000;
const FIRST_ANSWER_LIMIT_MS = 40_000;

/** One user, ACCOUNTS sim accounts in GROUPS groups (one Master each), every one known to the simulated broker. */
async function seed(dir: string): Promise<string> {
  const broker = new SimBroker();
  for (let i = 0; i < ACCOUNTS; i++) broker.createAccount({ id: `b${i}`, balance: 10_000 });
  const persistence = new SimPersistence(join(dir, 'simulator.json'), { sync: false });
  persistence.attach(broker);
  persistence.detach(broker);
  const store = await Store.open({ dataDir: dir });
  try {
    const auth = new AuthService(store, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
    const u = await auth.createUser('scale@example.test', 'bench-password');
    const { apiKey } = await auth.createApiKey(u.id, 'bench');
    const groups: string[] = [];
    for (let g = 0; g < GROUPS; g++) groups.push((await store.accounts.createGroup(u.id, `Group ${g}`)).id);
    await store.accounts.createMany(
      Array.from({ length: ACCOUNTS }, (_, i) => ({
        userId: u.id,
        platform: 'sim' as const,
        role: i % GROUPS === 0 ? ('master' as const) : ('slave' as const),
        groupId: groups[Math.floor(i / (ACCOUNTS / GROUPS))]!,
        name: `Account ${i}`,
        brokerAccountId: `b${i}`,
        brokerAccountNumber: String(1000 + i),
      })),
    );
    return apiKey;
  } finally {
    await store.close();
  }
}

/** What the child reports of its event loop and of the collector's pauses since the last reset. */
type Loop = {
  maxMs: number;
  p99Ms: number;
  meanMs: number;
  gcMaxMs: number;
  gcMaxKind: number;
  gcSumMs: number;
  gcCount: number;
};
/** V8's gc entry kinds (perf_hooks `detail.kind`). */
const GC_KIND: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental marking', 8: 'weak callbacks' };
const ask = (child: ChildProcess, m: string) =>
  new Promise<Loop>((resolve) => {
    const on = (r: unknown) => {
      if (typeof r !== 'object') return;
      child.off('message', on);
      resolve(r as Loop);
    };
    child.on('message', on);
    child.send(m);
  });

/**
 * Issue 12, "10,000 accounts on one process": time to the first answer on an existing data dir, RSS, the longest
 * event-loop stall over a health round (read inside the service), and the p99 of paged GET /v1/accounts meanwhile.
 * The service runs with the node flags and malloc setting `deploy/copytrade.service` starts it with (what a
 * deployment of that size runs); BENCH_RUNTIME=bare runs it on node's defaults instead.
 */
export async function benchScale(): Promise<void> {
  const runtime = serviceRuntime();
  const dir = mkdtempSync(join(tmpdir(), 'ct-scale-'));
  let child: ChildProcess | null = null;
  try {
    const t0 = performance.now();
    const apiKey = await seed(dir);
    if (process.env.BENCH_SCALE_KEEP === '1') console.log(`api key ${apiKey}`);
    const seedMs = performance.now() - t0;
    const port = 18900 + Math.floor(Math.random() * 400);
    const headers = { authorization: `Bearer ${apiKey}` };
    const start = performance.now();
    child = spawn(process.execPath, [...runtime.nodeArgs, 'dist/bench/scale-child.js', dir, String(port)], {
      cwd: packageRoot(),
      env: {
        ...process.env,
        ...runtime.env,
        LOG_LEVEL: 'warn',
        COPYTRADE_HEALTH_INTERVAL_MS: String(HEALTH_MS),
        COPYTRADE_V1_READS_PER_WINDOW: '1000000',
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let startedMs = Number.NaN;
    child.on('message', (m) => {
      if (m === 'started') startedMs = performance.now() - start;
    });
    const firstMs = await waitFor200(`http://127.0.0.1:${port}/v1/me`, FIRST_ANSWER_LIMIT_MS, headers)
      .then(() => performance.now() - start)
      .catch(() => Number.NaN);
    if (Number.isNaN(firstMs)) {
      report('scale-10k', [
        { measure: 'start to first answer (ms)', value: `none within ${FIRST_ANSWER_LIMIT_MS}`, target: '<= 5000' },
      ]);
      return;
    }
    child.send('reset');

    // One client paging through the list for the whole window (a health round runs meanwhile).
    const latencies: number[] = [];
    let cursor: string | null = null;
    const until = performance.now() + WINDOW_MS;
    while (performance.now() < until) {
      const url: string = `http://127.0.0.1:${port}/v1/accounts?limit=100${cursor ? `&cursor=${cursor}` : ''}`;
      const t = performance.now();
      const r: Response = await fetch(url, { headers });
      await r.arrayBuffer();
      latencies.push(performance.now() - t);
      const link: string | null = r.headers.get('link');
      cursor = link ? new URL(/<([^>]+)>/.exec(link)![1]!, 'http://x').searchParams.get('cursor') : null;
    }
    const loop = await ask(child, 'read');
    const rss = rssMb(child.pid!);
    const t = performance.now();
    const whole = await (await fetch(`http://127.0.0.1:${port}/v1/accounts`, { headers })).arrayBuffer();
    const wholeMs = performance.now() - t;
    latencies.sort((a, b) => a - b);
    report(
      'scale-10k',
      [
        { measure: `seed ${ACCOUNTS} accounts (ms, not timed by the goal)`, value: Math.round(seedMs), target: '' },
        { measure: 'start to first answer, existing data dir (ms)', value: Math.round(firstMs), target: '<= 5000' },
        { measure: 'start to start-up done (watchers, settle pass) (ms)', value: Math.round(startedMs), target: '' },
        {
          measure: `RSS after ${WINDOW_MS / 1000} s of paging over a health round (MB; ${describeRuntime(runtime)})`,
          value: Math.round(rss),
          target: '<= 400',
        },
        { measure: 'longest event-loop stall in that window (ms)', value: Math.round(loop.maxMs), target: '<= 50' },
        { measure: 'event-loop delay p99 in that window (ms)', value: Math.round(loop.p99Ms), target: '' },
        {
          measure: `longest collector pause in that window (ms; ${GC_KIND[loop.gcMaxKind] ?? `kind ${loop.gcMaxKind}`})`,
          value: Math.round(loop.gcMaxMs),
          target: '',
        },
        {
          measure: `collector pauses in that window: ${loop.gcCount}, in all (ms)`,
          value: Math.round(loop.gcSumMs),
          target: '',
        },
        {
          measure: `paged GET /v1/accounts?limit=100, ${latencies.length} requests: p50 (ms)`,
          value: Number(percentile(latencies, 50).toFixed(1)),
          target: '',
        },
        {
          measure: 'paged GET /v1/accounts?limit=100: p99 (ms)',
          value: Number(percentile(latencies, 99).toFixed(1)),
          target: '<= 50',
        },
        { measure: 'paged GET: max (ms)', value: Math.round(latencies[latencies.length - 1] ?? 0), target: '' },
        {
          measure: `whole list unpaged: ${(whole.byteLength / 1e6).toFixed(1)} MB in (ms)`,
          value: Math.round(wholeMs),
          target: '',
        },
      ],
      { accounts: ACCOUNTS, groups: GROUPS, healthIntervalMs: HEALTH_MS, windowMs: WINDOW_MS },
    );
  } finally {
    if (child && child.exitCode === null) {
      const c = child;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.send('stop');
        setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
      });
    }
    // BENCH_SCALE_KEEP=1 keeps the seeded data dir (to start the service on it by hand).
    if (process.env.BENCH_SCALE_KEEP === '1') console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
