import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { packageRoot } from '../src/config/package-root.js';

export interface Row {
  [k: string]: string | number;
}

/** Prints a table and writes the JSON beside the others under bench/results/. */
export function report(name: string, rows: Row[], meta: Record<string, unknown> = {}): void {
  console.log(`\n## ${name}`);
  console.table(rows);
  const dir = join(packageRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify({ name, at: new Date().toISOString(), node: process.version, ...meta, rows }, null, 2),
  );
  console.log(`written ${file}`);
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export function spawnNode(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: packageRoot(),
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export async function waitFor200(
  url: string,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    try {
      // A listening server with a blocked event loop would hold a request for ever: the timeout bounds each try too.
      const left = Math.max(1, Math.round(timeoutMs - (performance.now() - t0)));
      const r = await fetch(url, { headers, signal: AbortSignal.timeout(left) });
      if (r.status === 200) return performance.now() - t0;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}
