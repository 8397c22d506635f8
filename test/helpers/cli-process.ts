import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { identify, type ProcessIdentity, signalProcess, stillRunning } from '../../src/config/process-identity.js';
import { CLI } from './cli-command.js';

/**
 * Every process a test file started (CLIs and the simulators they spawned), to kill at the end. Each is kept with
 * its start time: a pid of a process that exited long ago may by then be another one's (CI wraps the 32768 pids
 * of its machine within a run), and a SIGKILL to the bare number can hit a test runner's worker (the likely cause
 * of a CI run's "Worker exited unexpectedly").
 */
const started: ProcessIdentity[] = [];

/** Records a process to kill at the end of the file: call it while the process is known to run. */
export function track(...pids: number[]): void {
  for (const pid of pids) started.push(identify(pid));
}

/** True while the process tracked under `pid` runs (false once gone, even if its number was given to another). */
export const alive = (pid: number) => {
  const id = [...started].reverse().find((s) => s.pid === pid) ?? identify(pid);
  return stillRunning(id);
};

export function killStarted(): void {
  for (const id of started) signalProcess(id, 'SIGKILL');
}

/** The `copytrade` CLI (cli-command.ts: plain node, so the pid a test kills is the CLI's), on the embedded store, health rounds off, quiet logs. */
export function cli(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, DATABASE_URL: '', COPYTRADE_HEALTH_INTERVAL_MS: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child.pid!);
  return child;
}

/**
 * `npm start -- ARGS` as a newcomer runs it (the build in dist/, kept fresh by `scripts/build.mjs --if-stale`).
 * The pid is npm's: a signal to it must reach the service.
 */
export function npmStart(
  args: string[],
  env: Record<string, string> = {},
  o: { ownGroup?: boolean } = {},
): ChildProcess {
  const child = spawn('npm', ['start', '--', ...args], {
    env: { ...process.env, DATABASE_URL: '', COPYTRADE_HEALTH_INTERVAL_MS: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a shell's job: `kill %1` is then process.kill(-pid).
    detached: !!o.ownGroup,
  });
  track(child.pid!);
  return child;
}

/** Polls `check` every 50 ms until it holds; fails after `withinMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  withinMs: number,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resolves with the first JSON line of stdout that has `key`; rejects if the process exits first. */
export function firstJson<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (c) => {
      stderr += String(c);
    });
    const onExit = (code: number | null) =>
      reject(new Error(`exited ${code} before printing ${key}: ${stderr.slice(-2000)}`));
    child.once('exit', onExit);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const v = JSON.parse(line) as Record<string, unknown>;
        if (key in v) {
          child.off('exit', onExit);
          resolve(v as T);
        }
      } catch {
        /* a log line */
      }
    });
  });
}

export const exited = (child: ChildProcess) =>
  new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  );
