import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import npm from '@sparticuz/chromium';

/** Debian's Chromium, used when present (CI machines and most developers' have it). */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** The flags this machine needs (node-svc.md): no sandbox as root, and no background networking (closed network). */
const BASE_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Of @sparticuz/chromium's recommended flags, the ones left out: --single-process is a Lambda workaround and makes
 * one crashed page take the browser down; the web-security ones would test the dashboard under weaker rules than a
 * user's browser has (CORS, mixed content, site isolation); headless mode is playwright's to set.
 */
const DROPPED_NPM_ARGS = [
  /^--single-process$/,
  /^--disable-web-security$/,
  /^--allow-running-insecure-content$/,
  /^--disable-site-isolation-trials$/,
  /^--headless\b/,
];

export type ChromiumSource = 'env' | 'system' | 'npm';
export interface ChromiumChoice {
  path: string;
  source: ChromiumSource;
  args: string[];
}

export interface ChromiumEnv {
  CHROMIUM_PATH?: string;
  /** '1' skips /usr/bin/chromium, to prove the npm-shipped browser works on a machine that has Debian's. */
  COPYTRADE_TEST_IGNORE_SYSTEM_CHROMIUM?: string;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkgDir = join(root, 'node_modules', '@sparticuz', 'chromium');

/**
 * The browser the tests drive: CHROMIUM_PATH if set, else Debian's when present, else the one the npm package
 * @sparticuz/chromium ships (unpacked once per machine and version into the temp dir), so `npm ci && npm test`
 * needs nothing installed by hand.
 */
export function resolveChromium(
  env: ChromiumEnv = process.env,
  exists: (p: string) => boolean = existsSync,
): ChromiumChoice {
  if (env.CHROMIUM_PATH) return { path: env.CHROMIUM_PATH, source: 'env', args: BASE_ARGS };
  if (env.COPYTRADE_TEST_IGNORE_SYSTEM_CHROMIUM !== '1' && exists(SYSTEM_CHROMIUM)) {
    return { path: SYSTEM_CHROMIUM, source: 'system', args: BASE_ARGS };
  }
  return npmChromium();
}

/** The npm-shipped Chromium, unpacked under cacheRoot if needed; always this one, whatever the machine has. */
export function npmChromium(cacheRoot = tmpdir()): ChromiumChoice {
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const dir = join(cacheRoot, `copytrade-chromium-${version}-${process.getuid?.() ?? 0}`);
  const path = join(dir, 'chromium');
  if (!existsSync(path)) unpack(dir);
  return { path, source: 'npm', args: [...BASE_ARGS, ...npmArgs()] };
}

/**
 * The package unpacks into os.tmpdir() at fixed names, which would race between test processes and between users
 * of one machine; so a child process unpacks it into a private staging dir (TMPDIR), renamed into place whole.
 */
function unpack(dir: string): void {
  // Only a whole copy is ever renamed into place, so a dir without the binary was damaged since (a temp cleaner).
  // Checked again here: another process may have put its copy in place since the caller looked.
  if (existsSync(join(dir, 'chromium'))) return;
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  const staging = mkdtempSync(join(dirname(dir), 'copytrade-chromium-staging-'));
  try {
    const script =
      "import c from '@sparticuz/chromium'; c.setGraphicsMode = false; process.stdout.write(await c.executablePath());";
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      env: { ...process.env, TMPDIR: staging },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (out !== join(staging, 'chromium'))
      throw new Error(`@sparticuz/chromium unpacked to ${out}, expected ${staging}`);
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another process got there first: its copy is whole (renamed in one step), ours goes.
      if (!existsSync(join(dir, 'chromium'))) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function npmArgs(): string[] {
  npm.setGraphicsMode = false; // --disable-gpu: no WebGL, and SwiftShader need not be unpacked
  return npm.args.filter((a) => !DROPPED_NPM_ARGS.some((re) => re.test(a)));
}
