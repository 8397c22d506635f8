import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLinks } from './helpers/markdown-links.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The pages that describe the code's layout, or tell an operator where things are: every repository path they name
 * must exist. With each, how many src/ paths the extractor must find in it at least (a guard against finding none).
 */
const DOCS: [string, number][] = [
  ['docs/architecture.md', 6],
  ['docs/adding-a-platform.md', 6],
  ['docs/going-live.md', 3],
];

/** Top-level folders a path may start from; a path starting elsewhere is read as relative to src/. */
const TOP = ['src/', 'test/', 'bench/', 'docs/', 'scripts/', 'deploy/', '.ci/', 'bin/'];

/**
 * Names that are not files of the repository, each with why: files the service writes at run time, and the build's
 * output (checked by the build, not here).
 */
const NOT_REPOSITORY_FILES = new Map<string, string>([
  ['endpoints.json', "the simulator's addresses, written in its state dir at run time"],
  ['upstreams.json', "the simulator's upstream state, written at run time"],
  ['demo-upstreams.json', 'written in the data dir by the demo seeding'],
  ['deploy/copytrade.env', 'the operator writes it beside deploy/compose.yaml; .gitignore keeps it out'],
]);

/**
 * docs/adding-a-platform.md walks through adding an example platform D: the files it tells the reader to create do
 * not exist, but the same file of an existing platform must (its connect flow, wizard, test), or the guide is stale.
 */
const NEW_PLATFORM = /platformd|ConnectD/;
function siblingsOfNewPlatform(path: string): string[] {
  return ['a', 'b', 'c'].flatMap((x) => {
    const p = path.replace(/platformd/g, `platform${x}`).replace(/ConnectD/g, `Connect${x.toUpperCase()}`);
    return [p, p.replace(/(\.test\.ts)$/, `-a$1`)];
  });
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return out.split('\0').filter((f) => f && !f.split('/').includes('node_modules'));
}

/** A token that names a path: a slash or a file extension, and nothing that makes it a route, package or pattern. */
function looksLikePath(token: string): boolean {
  if (!/^[\w.@<>*/-]+$/.test(token)) return false; // spaces, braces, query strings, arrows: prose or a route
  if (token.startsWith('/') || token.startsWith('@') || token.includes('://')) return false; // route, package, URL
  if (/[<>*]/.test(token)) return false; // a pattern such as src/platforms/<name>/
  return token.includes('/') || /\.(ts|tsx|mjs|js|json|md|sql|service)$/.test(token);
}

/** Paths a page names: in backticks, as link targets, or bare in prose when they start from a top-level folder. */
function namedPaths(markdown: string): string[] {
  const found = new Set<string>();
  for (const [, token = ''] of markdown.matchAll(/`([^`\n]+)`/g)) if (looksLikePath(token)) found.add(token);
  for (const [, target = ''] of markdown.matchAll(/\]\(([^)#\s]+)/g))
    if (!/^[a-z]+:/i.test(target)) found.add(`link:${target}`);
  for (const [, bare = ''] of markdown.matchAll(/(?<![\w./-])((?:src|test|bench|scripts|deploy)\/[\w./<>*-]*)/g)) {
    const path = bare.replace(/\.+$/, '');
    if (looksLikePath(path)) found.add(path);
  }
  // File names in prose, e.g. the code tree's "copy-mapping.ts" (a URL's path is left to the link checker).
  for (const [, name = ''] of markdown.matchAll(/(?<![\w./:-])([\w][\w./-]*\.(?:ts|tsx|mjs|cjs|sql))\b/g))
    if (!name.includes('//') && looksLikePath(name)) found.add(name);
  return [...found];
}

/** Where a named path may be: from the root, from src/, or (a bare file name) anywhere in the repository. */
function resolves(token: string, files: string[], docDir: string): boolean {
  if (token.startsWith('link:')) return existsSync(join(ROOT, docDir, token.slice(5)));
  const path = token.replace(/\/$/, '');
  if (NOT_REPOSITORY_FILES.has(path)) return true;
  if (path === 'copytrade/client') return 'exports' in pkg() && './client' in pkg().exports;
  if (path.startsWith('dist/')) return true; // the build's output
  // Platform D exists since DXtrade: a path of it resolves as itself first, else as the guide's example.
  const real = existsSync(join(ROOT, path)) || existsSync(join(ROOT, 'src', path));
  if (NEW_PLATFORM.test(path) && !real)
    return siblingsOfNewPlatform(path).some((p) => existsSync(join(ROOT, p)) || existsSync(join(ROOT, 'src', p)));
  if (TOP.some((t) => token.startsWith(t))) return existsSync(join(ROOT, path));
  if (existsSync(join(ROOT, 'src', path)) || existsSync(join(ROOT, path))) return true;
  if (!path.includes('/')) return files.some((f) => basename(f) === path);
  // A path written from inside a folder of src (e.g. ctrader/connection.ts for src/platforms/ctrader/connection.ts).
  return files.some((f) => f.startsWith('src/') && (f.endsWith(`/${path}`) || f.includes(`/${path}/`)));
}

let pkgCache: { exports: Record<string, unknown> } | undefined;
function pkg() {
  pkgCache ??= JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return pkgCache!;
}

describe('the pages about the code name only paths that exist', () => {
  const files = trackedFiles();

  for (const [doc, minSrc] of DOCS) {
    it(`${doc}: every path it names exists`, () => {
      const named = namedPaths(readFileSync(join(ROOT, doc), 'utf8'));
      // Guards against an extractor that silently finds nothing.
      expect(named.filter((p) => p.startsWith('src/')).length).toBeGreaterThanOrEqual(minSrc);
      const missing = named.filter((p) => !resolves(p, files, 'docs'));
      expect(missing).toEqual([]);
    });
  }

  it('the extractor finds paths in backticks, links and prose, and leaves routes, packages and patterns', () => {
    const md =
      'See `src/a/b.ts`, `engine/x.ts`, `planner.ts`, [c](other.md#h), src/d/e.ts, and `GET /v1/accounts`,\n' +
      '`/healthz`, `@fastify/swagger`, `src/platforms/<name>/`, `ceil(keys / live workers)`, https://x.y/src/z.ts,\n' +
      'src/protocols/<name>/ and src/f.ts, copy-mapping.ts in prose.\n';
    expect(namedPaths(md).sort()).toEqual([
      'copy-mapping.ts',
      'engine/x.ts',
      'link:other.md',
      'planner.ts',
      'src/a/b.ts',
      'src/d/e.ts',
      'src/f.ts',
    ]);
  });
});

describe('docs/going-live.md names only settings the code reads', () => {
  it('every environment variable it names is read by name in src/', () => {
    const doc = readFileSync(join(ROOT, 'docs/going-live.md'), 'utf8');
    const names = [
      ...new Set([...doc.matchAll(/\b(COPYTRADE_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|NATS_URL)\b/g)].map((m) => m[1]!)),
    ];
    expect(names.length).toBeGreaterThan(10);
    const src = trackedFiles()
      .filter((f) => f.startsWith('src/') && f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    expect(names.filter((n) => !new RegExp(`['"\`.]${n}(?![\\w])`).test(src))).toEqual([]);
  });
});

describe('the run history moved out of docs/performance.md', () => {
  const history = trackedFiles().filter((f) => /^bench\/results\/history-[\w-]+\.md$/.test(f));

  it('is kept in the repository and linked from docs/performance.md', () => {
    expect(history.length).toBeGreaterThan(5);
    const perf = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
    for (const f of history) expect(perf).toContain(`../${f}`);
  });

  it('has no broken relative link or anchor', () => {
    expect(history.flatMap((f) => checkLinks(join(ROOT, f), ROOT))).toEqual([]);
  });
});
