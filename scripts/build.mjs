#!/usr/bin/env node
/**
 * The build (`npm run build`, also run by `prepare` at install) and its stamp. `--if-stale` (used by
 * `npm start` and `npm run bench`) builds only when the inputs changed since the last build: a SHA-256 over the
 * content of every input file, compared with dist/.build-stamp. Content, not mtimes, so a checkout or a `touch`
 * that changes nothing costs nothing, and an edit with an old mtime (a restored file) still rebuilds.
 * `--fresh` builds nothing and says by its exit code whether the build is fresh.
 * Plain JavaScript with no dependency: it runs before anything is compiled. Hashing the inputs takes ~50 ms
 * (measured: `--if-stale` on a fresh build costs ~30 ms CPU more than `node -e 0`).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.build-stamp');
/** What the build reads: the sources of both builds and every config that changes their output. */
const INPUTS = ['src', 'bench', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
/** The outputs a start needs: a stamp without them (dist wiped by hand) is stale. */
const OUTPUTS = [
  'dist/src/cli/main.js',
  'dist/web/index.html',
  'dist/pgdata-template/PG_VERSION',
  'dist/pgdata-template.tar',
];

function files(path) {
  const abs = join(root, path);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath ?? e.path, e.name)));
}

export function inputsHash() {
  const h = createHash('sha256');
  for (const input of INPUTS) {
    const list = input.includes('.') ? (existsSync(join(root, input)) ? [input] : []) : files(input);
    for (const f of list.sort()) {
      // Unit tests are not built; editing one must not cost a start a build.
      if (/\.test\.tsx?$/.test(f)) continue;
      // The benchmarks' results are their output: a bench run must not make the next start build again.
      if (f.split('\\').join('/').startsWith('bench/results/')) continue;
      h.update(`${f.split('\\').join('/')}\0`)
        .update(readFileSync(join(root, f)))
        .update('\0');
    }
  }
  return h.digest('hex');
}

function fresh(hash) {
  if (!OUTPUTS.every((o) => existsSync(join(root, o)))) return false;
  try {
    return readFileSync(STAMP, 'utf8').trim() === hash;
  } catch {
    return false;
  }
}

function step(args) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const hash = inputsHash();
// `--fresh` only answers: exit 0 when dist/ is the build of the sources as they are, 1 otherwise (the tests run the
// built CLI then, the sources through tsx otherwise: test/helpers/cli-command.ts).
if (process.argv.includes('--fresh')) process.exit(fresh(hash) ? 0 : 1);
if (process.argv.includes('--if-stale') && fresh(hash)) process.exit(0);
if (process.argv.includes('--if-stale'))
  process.stderr.write('copytrade: sources changed since the last build, building (once)...\n');
step([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
step([
  join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
  'build',
  '--config',
  'src/web/vite.config.ts',
  '--logLevel',
  'warn',
]);
// The embedded store's empty, migrated cluster: a first start copies it instead of running initdb (seconds).
step([join(root, 'dist', 'src', 'store', 'make-template.js')]);
// The hash of what was read before building: an edit made during the build makes the next start build again.
writeFileSync(STAMP, `${hash}\n`);
