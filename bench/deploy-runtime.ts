import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../src/config/package-root.js';

/** The node flags and environment a deployment starts the service with. */
export interface DeployRuntime {
  nodeArgs: string[];
  env: Record<string, string>;
}

/**
 * What `deploy/copytrade.service` starts `serve` with: its `Environment=` lines (the systemd specifier ones, `%d`,
 * left out) and the node flags between the node binary and the script in `ExecStart=`. Read from the unit itself so
 * that a benchmark measuring "the service as deployed" cannot drift from what is deployed.
 */
export function parseUnit(text: string): DeployRuntime {
  const env: Record<string, string> = {};
  let nodeArgs: string[] = [];
  for (const line of text.split('\n')) {
    const envLine = /^Environment=([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (envLine && !envLine[2]!.includes('%')) env[envLine[1]!] = envLine[2]!;
    const exec = /^ExecStart=(\S+)\s+(.*)$/.exec(line.trim());
    if (exec) {
      const words = exec[2]!.split(/\s+/);
      const script = words.findIndex((w) => !w.startsWith('-'));
      nodeArgs = words.slice(0, script);
    }
  }
  return { nodeArgs, env };
}

export const deployRuntime = (): DeployRuntime =>
  parseUnit(readFileSync(join(packageRoot(), 'deploy', 'copytrade.service'), 'utf8'));

/** How a table row names it: `MALLOC_ARENA_MAX=2 --max-semi-space-size=16`. */
export const describeRuntime = (r: DeployRuntime): string =>
  [...Object.entries(r.env).map(([k, v]) => `${k}=${v}`), ...r.nodeArgs].join(' ') || 'node defaults';

/**
 * What a benchmark starts its service with: the deployment's runtime (BENCH_RUNTIME=bare: node's defaults), then
 * BENCH_CHILD_ARGS, node flags for that run only (e.g. --cpu-prof --cpu-prof-dir=DIR to see where the time goes).
 */
export function serviceRuntime(): DeployRuntime {
  const base = process.env.BENCH_RUNTIME === 'bare' ? { nodeArgs: [], env: {} } : deployRuntime();
  const extra = (process.env.BENCH_CHILD_ARGS ?? '').split(' ').filter(Boolean);
  return { nodeArgs: [...base.nodeArgs, ...extra], env: base.env };
}
