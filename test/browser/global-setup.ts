import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveChromium } from './chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * The browser tests need a Chromium: when it is the npm-shipped one, it is unpacked here once, before the test
 * processes start (each would unpack its own copy otherwise). They also need the built dashboard (dist/web),
 * which the service serves: built here when it is missing or older than its sources (`npm ci` builds it through
 * the prepare script).
 */
export default function setup(): void {
  const browser = resolveChromium();
  if (browser.source !== 'system') console.log(`[browser tests] Chromium: ${browser.path} (${browser.source})`);
  const index = join(root, 'dist', 'web', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newest(join(root, 'src', 'web'))) return;
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      'src/web/vite.config.ts',
      '--logLevel',
      'warn',
    ],
    { cwd: root, stdio: 'inherit' },
  );
}
