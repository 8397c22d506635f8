// Issue 11's "10,000 accounts over 2 workers": RSS and start time per process, CPU of one health round, and how
// the leases split. `npm run bench scale-out-10k` (PostgreSQL and NATS on 127.0.0.1; several minutes, so only
// when named). Bounded: every wait has a limit; the processes, the temp database and the temp dir are removed.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AuthService } from '../src/auth/auth-service.js';
import { CredentialBox } from '../src/auth/credential-box.js';
import { connectSimulator } from '../src/demo/simulator-client.js';
import { SimBroker } from '../src/simulator/broker.js';
import { SimPersistence } from '../src/simulator/persistence.js';
import { Store } from '../src/store/store.js';
import { freePort } from '../test/helpers/free-port.js';
import { cli, exited, firstJson, killStarted, until } from '../test/helpers/cli-process.js';
import { NATS_URL } from '../test/helpers/nats.js';
import { tempDatabase } from '../test/helpers/postgres.js';
import { report, rssMb, type Row } from './lib.js';

const ACCOUNTS = Number(process.env.BENCH_SCALE_ACCOUNTS ?? 10_000);
const GROUPS = 100;
/** One health round is spread over this interval; the CPU windows are this long. */
const HEALTH_MS = Number(process.env.BENCH_10K_HEALTH_MS ?? 30_000);
const READY_LIMIT_MS = 10 * 60_000;
/** How long the CPU window waits for every account to have been checked once (a whole round) before it stops. */
const ROUND_LIMIT_MS = Number(process.env.BENCH_10K_ROUND_LIMIT_MS ?? 6 * 60_000);
const CTID_USER = 'bench-10k-ctid';
/** Requests a second per cTrader connection (the Open API's limit, and the simulator's). */
const RATE = 50;
/**
 * cTrader connections per worker: 5,000 accounts fill the factory's pool to its default cap (4 of 25 accounts or
 * more each; the simulator sets no cap of its own).
 */
const CONNECTIONS = 2 * 4;

/** CPU seconds (user + system) the process has used, from /proc (clock ticks of 10 ms). */
function cpuSec(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** The simulator's state: ACCOUNTS cTrader demo accounts of one cTrader ID user, written before it starts. */
function seedSimulator(dir: string): void {
  const broker = new SimBroker();
  for (let i = 0; i < ACCOUNTS; i++)
    broker.createAccount({
      balance: 10_000,
      currency: 'USD',
      hedging: true,
      leverage: 100,
      meta: { ctidUserId: CTID_USER, environment: 'demo', brokerName: 'SIMC' },
    });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const persistence = new SimPersistence(join(dir, 'simulator.json'), { sync: false });
  persistence.attach(broker);
  persistence.detach(broker);
}

interface Proc {
  name: string;
  child: ChildProcess;
  port: number;
  spawnedAt: number;
  readyMs: number;
}

/**
 * Reads a child's output as it comes (kept: the last 4 kB, for an error): a pipe nobody reads fills up, and a
 * process whose logger waits on it stops altogether (seen: a worker blocked mid-round, deaf to SIGTERM).
 */
function drain(child: ChildProcess): () => string {
  let tail = '';
  const keep = (c: Buffer) => {
    tail = (tail + String(c)).slice(-4096);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail;
}

async function readyWithin(p: Proc): Promise<void> {
  await until(
    `${p.name} ready`,
    async () => {
      try {
        const r = await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(5000) });
        await r.arrayBuffer();
        return r.status === 200;
      } catch {
        return false;
      }
    },
    READY_LIMIT_MS,
  );
  p.readyMs = performance.now() - p.spawnedAt;
}

export async function benchScaleOut10k(): Promise<void> {
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ct-10k-'));
  const db = await tempDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // An idle client's error (its database dropped or its backend terminated from outside: seen once on a shared
  // server) would crash the process past the cleanup below; the next query fails instead, and the cleanup runs.
  pool.on('error', () => undefined);
  const key = randomBytes(32);
  const meta: Record<string, unknown> = { accounts: ACCOUNTS, groups: GROUPS, healthIntervalMs: HEALTH_MS };
  try {
    meta.loadBefore = loadavg();
    const t0 = performance.now();
    seedSimulator(join(dir, 'sim'));
    const env = {
      DATABASE_URL: db.url,
      NATS_URL,
      COPYTRADE_SECRET_KEY: key.toString('base64'),
      LOG_LEVEL: 'warn',
    };
    const simProc = cli(['simulator', '--data-dir', join(dir, 'sim'), '--json'], env);
    const endpointsFile = (await firstJson<{ endpointsFile: string }>(simProc, 'endpointsFile')).endpointsFile;
    drain(simProc);
    const sim = await connectSimulator(endpointsFile);
    const sims = (await sim.accounts()).filter((a) => a.ctidTraderAccountId);
    if (sims.length !== ACCOUNTS)
      throw new Error(`the simulator lists ${sims.length} cTrader accounts, not ${ACCOUNTS}`);
    const tokens = await sim.issueCTraderToken(CTID_USER);

    // The store: one user, GROUPS copier groups of ACCOUNTS / GROUPS accounts, the first of each its Master.
    const store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
    try {
      const auth = new AuthService(store, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
      const u = await auth.createUser('scale-out-10k@example.test', 'bench-password');
      const groups: string[] = [];
      for (let g = 0; g < GROUPS; g++) groups.push((await store.accounts.createGroup(u.id, `Group ${g}`)).id);
      const box = new CredentialBox(key);
      await store.accounts.createMany(
        sims.map((s, i) => ({
          userId: u.id,
          platform: 'platformc' as const,
          role: i % (ACCOUNTS / GROUPS) === 0 ? ('master' as const) : ('slave' as const),
          groupId: groups[Math.floor(i / (ACCOUNTS / GROUPS))]!,
          environment: 'demo',
          name: `Account ${i}`,
          brokerAccountId: s.ctidTraderAccountId!,
          brokerAccountNumber: s.login,
          brokerName: 'SIMC',
          credentialsEnc: box.seal({
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken,
            ctidTraderAccountId: s.ctidTraderAccountId,
            traderLogin: s.login,
          }),
        })),
      );
    } finally {
      await store.close();
    }
    rows.push({
      measure: `seed ${ACCOUNTS} accounts: simulator + store (ms)`,
      value: Math.round(performance.now() - t0),
    });

    // api + 2 workers, spawned at once.
    const roleEnv = { ...env, COPYTRADE_HEALTH_INTERVAL_MS: String(HEALTH_MS) };
    const spawnRole = async (name: string, args: string[]): Promise<Proc> => {
      const port = await freePort();
      const spawnedAt = performance.now();
      const child = cli([...args, '--port', String(port), '--simulator', endpointsFile, '--json'], roleEnv);
      drain(child);
      return { name, child, port, spawnedAt, readyMs: Number.NaN };
    };
    const procs = [
      await spawnRole('api', ['api']),
      await spawnRole('worker 1', ['worker']),
      await spawnRole('worker 2', ['worker']),
    ];
    meta.loadAtStart = loadavg();
    await Promise.all(procs.map(readyWithin));
    for (const p of procs)
      rows.push({
        measure: `${p.name}: spawn -> /readyz 200${p.name === 'api' ? '' : ' (first lease round done)'} (ms)`,
        value: Math.round(p.readyMs),
      });

    // Settled: the lease split unchanged over three looks 2 s apart (bounded).
    const split = async () =>
      (
        await pool.query<{ owner: string; n: number }>(
          `select owner, count(*)::int n from leases where expires_at > now() group by owner order by owner`,
        )
      ).rows;
    const settle = async () => {
      let last = '';
      let stable = 0;
      await until(
        'the lease split settles',
        async () => {
          const now = JSON.stringify(await split());
          stable = now === last ? stable + 1 : 0;
          last = now;
          if (stable < 3) await new Promise((r) => setTimeout(r, 2000));
          return stable >= 3;
        },
        5 * 60_000,
      );
    };
    // Health rounds, measured from the outside: a window runs from its start until every account has a check
    // written since (a whole round over both workers, whatever phase the rounds were in; at least one interval, at
    // most ROUND_LIMIT_MS). The first window starts when both workers are ready (their first round includes each
    // account's cTrader authorisation and asset list), the second right after it (steady rounds). Per window: CPU
    // per process, its length, accounts/s, and the requests the simulator received per payload type against the
    // ceiling of the workers' CONNECTIONS at RATE req/s (the physical floor of the window = its requests / that ceiling).
    const checkedSince = async (since: Date) =>
      (
        await pool.query<{ n: number }>(
          `select count(*)::int n from accounts where (health->>'checkedAt')::timestamptz >= $1`,
          [since],
        )
      ).rows[0]!.n;
    const failing = async () =>
      (
        await pool.query<{ n: number; err: string | null }>(
          `select count(*)::int n, min(health->>'lastError') err from accounts where health->>'lastError' is not null`,
        )
      ).rows[0]!;
    const measureRound = async (label: string): Promise<number> => {
      const since = new Date();
      const before = procs.map((p) => cpuSec(p.child.pid!));
      const reqBefore = await sim.ctraderRequests();
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, HEALTH_MS));
      const whole = await until(
        'a whole health round',
        async () => (await checkedSince(since)) >= ACCOUNTS,
        ROUND_LIMIT_MS,
      )
        .then(() => true)
        .catch(() => false);
      const windowSec = (performance.now() - w0) / 1000;
      const after = procs.map((p) => cpuSec(p.child.pid!));
      const reqAfter = await sim.ctraderRequests();
      const checked = await checkedSince(since);
      meta[`load ${label}`] = loadavg();
      const head = `${label} (${windowSec.toFixed(1)} s${whole ? '' : ', limit reached'})`;
      for (const [i, p] of procs.entries())
        rows.push({ measure: `${head}: ${p.name} CPU (s)`, value: (after[i]! - before[i]!).toFixed(2) });
      rows.push({
        measure: `${head}: accounts checked (both workers), accounts/s`,
        value: `${checked} of ${ACCOUNTS}, ${(checked / windowSec).toFixed(1)}/s`,
      });
      let total = 0;
      for (const [name, c] of Object.entries(reqAfter.requests)) {
        const n = c.count - (reqBefore.requests[name]?.count ?? 0);
        if (n === 0) continue;
        total += n;
        const busy = c.busyMs - (reqBefore.requests[name]?.busyMs ?? 0);
        rows.push({
          measure: `${head}: simulator received ${name} (count, simulator busy ms)`,
          value: `${n}, ${Math.round(busy)}`,
        });
      }
      rows.push({
        measure: `${head}: requests at the simulator, req/s (ceiling ${CONNECTIONS * RATE}), floor = requests / ceiling (s)`,
        value: `${total}, ${(total / windowSec).toFixed(1)}/s, ${(total / (CONNECTIONS * RATE)).toFixed(1)}`,
      });
      rows.push({ measure: `${head}: refused BLOCKED_PAYLOAD_TYPE`, value: reqAfter.blocked - reqBefore.blocked });
      const f = await failing();
      rows.push({ measure: `${head}: accounts whose last check failed (one error)`, value: `${f.n} ${f.err ?? ''}` });
      return windowSec;
    };
    await measureRound('first round');
    const windowSec = await measureRound('later round');

    await settle();
    const owners = await split();
    rows.push({
      measure: `leases per worker (of ${ACCOUNTS} accounts + the deployment lease)`,
      value: owners.map((o) => o.n).join(' / ') + (owners.length < 2 ? ' (one worker holds them all)' : ''),
    });
    for (const p of procs)
      rows.push({ measure: `${p.name}: RSS after the rounds (MB)`, value: Math.round(rssMb(p.child.pid!)) });

    // The same window with health rounds off (workers restarted): what the workers use without a round.
    if (process.env.BENCH_10K_BASELINE !== '0') {
      for (const p of procs.slice(1)) {
        p.child.kill('SIGTERM');
        const kill = setTimeout(() => p.child.kill('SIGKILL'), 30_000);
        await exited(p.child);
        clearTimeout(kill);
      }
      const quietEnv = { ...env, COPYTRADE_HEALTH_INTERVAL_MS: '0' };
      const quiet: Proc[] = [];
      for (const n of [1, 2]) {
        const port = await freePort();
        const spawnedAt = performance.now();
        const child = cli(['worker', '--port', String(port), '--simulator', endpointsFile, '--json'], quietEnv);
        drain(child);
        quiet.push({ name: `worker ${n} (no health)`, child, port, spawnedAt, readyMs: Number.NaN });
      }
      await Promise.all(quiet.map(readyWithin));
      await settle();
      for (const p of quiet)
        rows.push({ measure: `${p.name}: restart -> /readyz 200 (ms)`, value: Math.round(p.readyMs) });
      const qb = quiet.map((p) => cpuSec(p.child.pid!));
      const q0 = performance.now();
      await new Promise((r) => setTimeout(r, windowSec * 1000));
      const qSec = (performance.now() - q0) / 1000;
      const qa = quiet.map((p) => cpuSec(p.child.pid!));
      meta.loadDuringBaseline = loadavg();
      for (const [i, p] of quiet.entries())
        rows.push({
          measure: `${p.name}: CPU over the same window (${qSec.toFixed(1)} s, s)`,
          value: (qa[i]! - qb[i]!).toFixed(2),
        });
      rows.push({ measure: 'leases per worker after the restart', value: (await split()).map((o) => o.n).join(' / ') });
    }
  } finally {
    killStarted();
    await pool.end().catch(() => undefined);
    await db.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    meta.loadAfter = loadavg();
    report('scale-out-10k', rows, meta);
  }
}
