import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm start` builds only when the sources changed (scripts/build.mjs --if-stale). Run here on a copy of the
 * script in a scratch project whose tsc and vite only record that they ran, so the test never builds for real.
 */
const root = mkdtempSync(join(tmpdir(), 'ct-build-stamp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const log = join(root, 'builds.log');
/** A tool that records it ran (one line) and writes its outputs. */
const fakeTool = (...outs: string[]) => `import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(outs[0])} + '\\n');
for (const out of ${JSON.stringify(outs)}) {
  const f = join(${JSON.stringify(root)}, out);
  mkdirSync(dirname(f), { recursive: true });
  writeFileSync(f, 'built');
}
`;

function setUp(): void {
  mkdirSync(join(root, 'scripts'));
  copyFileSync(join(process.cwd(), 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
  for (const [tool, out] of [
    ['typescript/bin/tsc', 'dist/src/cli/main.js'],
    ['vite/bin/vite.js', 'dist/web/index.html'],
  ] as const) {
    mkdirSync(join(root, 'node_modules', tool, '..'), { recursive: true });
    writeFileSync(join(root, 'node_modules', tool), fakeTool(out));
  }
  // The store template step runs a compiled script; here one that only records it ran.
  mkdirSync(join(root, 'dist', 'src', 'store'), { recursive: true });
  writeFileSync(
    join(root, 'dist', 'src', 'store', 'make-template.js'),
    fakeTool('dist/pgdata-template/PG_VERSION', 'dist/pgdata-template.tar'),
  );
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  mkdirSync(join(root, 'src', 'a'), { recursive: true });
  writeFileSync(join(root, 'src', 'a', 'x.ts'), 'export const x = 1;\n');
}

const start = () =>
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const builds = () => readFileSync(log, 'utf8').trim().split('\n').length / 3;

describe('build only when stale', () => {
  it('builds on the first start, not again while the sources are the same, again once one changes', () => {
    setUp();
    start();
    expect(builds()).toBe(1);
    start();
    expect(builds()).toBe(1);
    // A touch that changes nothing (a checkout, an editor saving the same text) costs no build...
    utimesSync(join(root, 'src', 'a', 'x.ts'), new Date(), new Date(Date.now() + 60_000));
    start();
    expect(builds()).toBe(1);
    // ...neither does a unit test, which the build does not compile...
    writeFileSync(join(root, 'src', 'a', 'x.test.ts'), 'it;\n');
    start();
    expect(builds()).toBe(1);
    // ...nor a benchmark's result written under bench/results (a bench run is followed by a start)...
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', 'start-1.json'), '{}\n');
    start();
    expect(builds()).toBe(1);
    // ...a real change does, in a nested folder too, and so does a new file.
    writeFileSync(join(root, 'src', 'a', 'x.ts'), 'export const x = 2;\n');
    start();
    expect(builds()).toBe(2);
    writeFileSync(join(root, 'src', 'y.ts'), 'export const y = 1;\n');
    start();
    expect(builds()).toBe(3);
    // Outputs wiped by hand: stale whatever the stamp says.
    rmSync(join(root, 'dist', 'web'), { recursive: true });
    start();
    expect(builds()).toBe(4);
    start();
    expect(builds()).toBe(4);
  });
});
