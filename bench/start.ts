import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../src/config/package-root.js';
import { signalProcess } from '../src/config/process-identity.js';
import { report, type Row } from './lib.js';

const RESTARTS = Number(process.env.BENCH_START_RESTARTS ?? 3);
/** A start that has not answered by then is a failure of the bench, not a figure. */
const LIMIT_MS = 60_000;

interface Run {
  listeningMs: number;
  firstAnswerMs: number;
}

/**
 * One run of `npm start`'s command line on a data dir: from the spawn to the "Server listening" line, and to the
 * first 200 of GET /v1/accounts with the demo key (read from demo-credentials.json as soon as it is there).
 * BENCH_START_NPM=1 spawns `npm start --` itself (adds npm's own start-up); default is the script's command with
 * the same env, so the figure is the service's. `root` is the checkout whose build runs (a baseline: another one).
 */
async function once(dir: string, port: number, root: string): Promise<Run> {
  const flags = ['--data-dir', dir, '--port', String(port)];
  const nodeArgs = (process.env.BENCH_CHILD_ARGS ?? '').split(' ').filter(Boolean);
  const t0 = performance.now();
  const child: ChildProcess =
    process.env.BENCH_START_NPM === '1'
      ? spawn('npm', ['start', '--', ...flags], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(
          'sh',
          [
            '-c',
            `"${process.execPath}" scripts/build.mjs --if-stale && exec "${process.execPath}" ${nodeArgs.join(' ')} bin/copytrade.js serve --demo "$@"`,
            'sh',
            ...flags,
          ],
          { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' } },
        );
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  try {
    const listening = new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`exited ${code} before listening:\n${stderr.slice(-2000)}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.includes('Server listening at')) resolve(performance.now() - t0);
      });
    });
    listening.catch(() => undefined);
    const credsFile = join(dir, 'demo-credentials.json');
    let firstAnswerMs = 0;
    while (performance.now() - t0 < LIMIT_MS && child.exitCode === null) {
      if (existsSync(credsFile)) {
        try {
          const { apiKey, v1BaseUrl } = JSON.parse(readFileSync(credsFile, 'utf8')) as {
            apiKey: string;
            v1BaseUrl: string;
          };
          // On a restart the file is the previous run's until this one rewrites it: the same key and URL.
          const res = await fetch(`${v1BaseUrl.replace(/:\d+$/, `:${port}`)}/v1/accounts`, {
            headers: { authorization: `Bearer ${apiKey}` },
            signal: AbortSignal.timeout(LIMIT_MS),
          });
          const body = (await res.json()) as { accounts?: unknown[] };
          if (res.status === 200) {
            if (!Array.isArray(body.accounts) || body.accounts.length === 0)
              throw new Error('the first 200 listed no demo account');
            firstAnswerMs = performance.now() - t0;
            break;
          }
        } catch (err) {
          if ((err as Error).message.startsWith('the first 200')) throw err;
          /* not up yet */
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    if (!firstAnswerMs) throw new Error(`no answer within ${LIMIT_MS} ms:\n${stderr.slice(-2000)}`);
    return { listeningMs: await listening, firstAnswerMs };
  } finally {
    await stopped(child);
  }
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
    });
  }
}

/**
 * Issue 14, "npm start serves within 5 s": the first start on a fresh data dir (store from the build's template,
 * demo seeded) and RESTARTS restarts on it, each a new process as `npm start` runs it.
 */
export async function benchStart(): Promise<void> {
  // BENCH_START_BASELINE=/path/to/other/checkout: the same runs on that build, alternating with this one, so both
  // see the same machine load (a before/after ratio on the shared VM), each round in the other order.
  const roots: Array<[string, string]> = [['this build', packageRoot()]];
  if (process.env.BENCH_START_BASELINE) roots.push(['baseline', process.env.BENCH_START_BASELINE]);
  const rounds = Number(process.env.BENCH_START_ROUNDS ?? 1);
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++)
    // The order swaps each round: the machine's load drifts, and the one measured first would always pay for it.
    for (const [label, root] of round % 2 === 1 ? roots : [...roots].reverse()) {
      const dir = mkdtempSync(join(tmpdir(), 'ct-start-'));
      const port = 19300 + Math.floor(Math.random() * 400);
      try {
        for (let i = 0; i <= RESTARTS; i++) {
          const r = await once(dir, port, root);
          rows.push({
            build: label,
            round,
            run: i === 0 ? 'first start' : `restart ${i}`,
            'to listening (ms)': Math.round(r.listeningMs),
            'to first 200 (ms)': Math.round(r.firstAnswerMs),
          });
        }
      } finally {
        // The service stops the simulator it started; one left running would be a bug, and must not outlive the bench.
        const endpoints = join(dir, 'simulator', 'endpoints.json');
        if (existsSync(endpoints)) {
          const e = JSON.parse(readFileSync(endpoints, 'utf8')) as { pid: number; startedAt?: string | null };
          if (signalProcess({ pid: e.pid, startedAt: e.startedAt ?? null }, 'SIGKILL')) {
            console.error(`simulator ${e.pid} outlived the service: stopped it`);
          }
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }
  report('start', rows, { loadavg: readFileSync('/proc/loadavg', 'utf8').trim() });
  console.log(JSON.stringify(rows));
}
