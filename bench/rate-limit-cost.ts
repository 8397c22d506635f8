import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { Store } from '../src/store/store.js';
import { AuthService } from '../src/auth/auth-service.js';
import { RateBucketsRepo } from '../src/store/repos/rate-buckets.js';
import { report, spawnNode, stop, waitFor200, type Row } from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 20;
const ROUNDS = 2;
const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** One user, one API key, 10 accounts in the store at `at` (a data dir, or a PostgreSQL URL). */
async function seed(at: { dataDir: string; databaseUrl?: string }): Promise<string> {
  const store = await Store.open(at);
  try {
    const auth = new AuthService(store, { accessTokenTtlSec: 3600, apiKeyOverlapSec: 0 });
    const u = await auth.createUser('bench@example.test', 'bench-password');
    for (let i = 0; i < 10; i++)
      await store.accounts.create({
        userId: u.id,
        platform: 'sim',
        role: i === 0 ? 'master' : 'slave',
        name: `Account ${i}`,
        brokerAccountId: `b${i}`,
        brokerAccountNumber: String(1000 + i),
      });
    return (await auth.createApiKey(u.id, 'bench')).apiKey;
  } finally {
    await store.close();
  }
}

/** req/s of one read route on a fresh `copytrade serve`, limits on (never reached: every request pays the bucket) or off. */
async function measure(
  at: { dataDir: string; databaseUrl?: string },
  apiKey: string,
  limiter: boolean,
  path: string,
): Promise<number> {
  const port = 18900 + Math.floor(Math.random() * 400);
  const limits = limiter ? '100000000' : '0';
  const child = spawnNode(['bin/copytrade.js', 'serve', '--data-dir', at.dataDir, '--port', String(port)], {
    DATABASE_URL: at.databaseUrl ?? '',
    COPYTRADE_HEALTH_INTERVAL_MS: '0',
    COPYTRADE_V1_READS_PER_WINDOW: limits,
    COPYTRADE_V1_WRITES_PER_WINDOW: limits,
  });
  try {
    const headers = { authorization: `Bearer ${apiKey}` };
    await waitFor200(`http://127.0.0.1:${port}/v1/me`, 60_000, headers);
    await autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: CONNECTIONS, duration: 1, headers }); // warm-up
    const r = await autocannon({
      url: `http://127.0.0.1:${port}${path}`,
      connections: CONNECTIONS,
      duration: DURATION_S,
      headers,
    });
    if (r.non2xx > 0) throw new Error(`${r.non2xx} answers were not 2xx`);
    return Math.round(r.requests.average);
  } finally {
    await stop(child);
  }
}

/** The bucket statement alone next to a primary-key read of the same store, in ms per call (sequential). */
async function statementCost(at: { dataDir: string; databaseUrl?: string }): Promise<{ take: number; read: number }> {
  const store = await Store.open(at);
  try {
    const repo = new RateBucketsRepo(store.database.db);
    const u = (await store.users.byEmail('bench@example.test'))!;
    const time = async (fn: () => Promise<unknown>) => {
      const t0 = performance.now();
      for (let i = 0; i < 500; i++) await fn();
      return (performance.now() - t0) / 500;
    };
    await time(() => repo.take('bench:reads', { quota: 1e9, windowSec: 60 })); // warm-up
    return {
      take: await time(() => repo.take('bench:reads', { quota: 1e9, windowSec: 60 })),
      read: await time(() => store.users.byId(u.id)),
    };
  } finally {
    await store.close();
  }
}

/**
 * The limiter's cost per request: the same read route with and without it, on both stores, alternating
 * (off, on, off, on) so drift in the machine's load falls on both alike.
 */
export async function benchRateLimitCost(): Promise<void> {
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ct-bench-rl-'));
  const dbName = `copytrade_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  let pgUrl: string | null = null;
  try {
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${dbName}`;
    pgUrl = u.toString();
  } catch {
    console.warn('PostgreSQL not reachable: embedded store only');
  }
  try {
    const stores: Array<[string, { dataDir: string; databaseUrl?: string }]> = [
      ['embedded (PGlite, fdatasync per commit)', { dataDir: join(dir, 'embedded') }],
    ];
    if (pgUrl) stores.push(['PostgreSQL', { dataDir: join(dir, 'pg'), databaseUrl: pgUrl }]);
    for (const [name, at] of stores) {
      const apiKey = await seed(at);
      const c = await statementCost(at);
      rows.push({
        store: name,
        route: 'bucket upsert vs primary-key read, in process',
        'without limiter (req/s)': `read ${c.read.toFixed(3)} ms`,
        'with limiter (req/s)': `upsert ${c.take.toFixed(3)} ms`,
        'with / without': '',
      });
      for (const path of ['/v1/me', '/v1/accounts']) {
        const off: number[] = [];
        const on: number[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          off.push(await measure(at, apiKey, false, path));
          on.push(await measure(at, apiKey, true, path));
        }
        const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
        rows.push({
          store: name,
          route: `GET ${path}`,
          'without limiter (req/s)': off.join(' / '),
          'with limiter (req/s)': on.join(' / '),
          'with / without': `${((avg(on) / avg(off)) * 100).toFixed(1)} %`,
        });
      }
    }
    report('rate-limit-cost', rows, { durationS: DURATION_S, connections: CONNECTIONS, rounds: ROUNDS });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (pgUrl) await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}
