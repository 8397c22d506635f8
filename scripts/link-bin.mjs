#!/usr/bin/env node
/**
 * Links `node_modules/.bin/copytrade` to this clone's launcher; `prepare` runs it after every `npm ci`.
 *
 * Why not `bin` in package.json: when the project in the current directory declares a bin of the name asked for,
 * npm 10/11's `npx` installs the project itself into its npx cache (a `file:` link) and runs it from there. The
 * first call then ran `prepare`, a full build with no output, even under a running service; every later call made
 * npm load the clone's whole dependency tree through that link (4-5 s a call here against 0.4 s for
 * `node bin/copytrade.js`). A plain link in node_modules/.bin is what npx runs at once, like any local tool's bin.
 */
import { lstatSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const binDir = join(root, 'node_modules', '.bin');
mkdirSync(binDir, { recursive: true });
const link = join(binDir, 'copytrade');
try {
  lstatSync(link);
  unlinkSync(link);
} catch {
  // Not there yet.
}
symlinkSync(join('..', '..', 'bin', 'copytrade.js'), link);
