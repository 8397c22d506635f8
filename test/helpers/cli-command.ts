import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.cwd();

/**
 * How the tests start the `copytrade` CLI: `node <these args> ARGS`. The build in dist/ (bin/copytrade.js) when it
 * is the build of the sources as they are (`scripts/build.mjs --fresh`, the content hash `npm start` checks too),
 * else the sources through tsx, so an edit is tested before it is built. The build started in 0.7-1.1 s where tsx
 * took 2.1-2.4 s (`copytrade simulator` to its first line, 2026-12-07), and the suite starts a few hundred CLIs and
 * service processes. `COPYTRADE_TEST_CLI=source` forces the sources.
 */
function command(): string[] {
  // tsx by its path, not its name: a test may start the CLI in another directory (where `tsx` does not resolve).
  const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const fromSource = ['--import', tsx, join(root, 'test', 'helpers', 'cli-entry.ts')];
  if (process.env.COPYTRADE_TEST_CLI === 'source') return fromSource;
  const fresh = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--fresh'], { stdio: 'ignore' });
  return fresh.status === 0 ? [join(root, 'bin', 'copytrade.js')] : fromSource;
}

export const CLI: readonly string[] = command();
