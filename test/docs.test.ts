import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, checkLinks, extractLinks, slugify } from './helpers/markdown-links.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the project's own text lives; anything here is read by someone who cloned only this repository. */
const SCOPE = [/^README\.md$/, /^docs\//, /^src\//, /^test\//, /^bench\//, /^scripts\//, /^\.ci\//];

// Built at runtime so this file does not contain what it looks for.
const FORBIDDEN = [['..', 'shared'].join('/'), ['shared', 'spec'].join('/'), ['shared', 'research'].join('/')];

const BINARY = /\.(png|jpe?g|gif|webp|ico|woff2?|wasm|gz|zip)$/i;

/** Tracked files plus new ones not ignored, so a file is caught before its first commit too. */
function projectFiles(): string[] {
  let listed: string[];
  try {
    const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    listed = out.split('\0').filter(Boolean);
  } catch {
    listed = walk(ROOT).map((f) => relative(ROOT, f));
  }
  return listed.filter(
    (f) => !f.split('/').includes('node_modules') && SCOPE.some((re) => re.test(f)) && existsSync(join(ROOT, f)),
  );
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === '.git' || entry === 'dist') continue;
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

const markdownFiles = () =>
  projectFiles().filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));

describe('the project stands alone', () => {
  it('finds the files it is meant to check', () => {
    const files = projectFiles();
    // Guards against a listing that silently finds nothing (and so passes whatever the files say).
    expect(files).toContain('README.md');
    expect(files).toContain('docs/interface.md');
    expect(files).toContain('test/docs.test.ts');
    expect(files.some((f) => f.startsWith('src/'))).toBe(true);
    expect(markdownFiles()).toContain('docs/platforms/README.md');
  });

  it('no file points into the shared folder a cloner does not have', () => {
    const hits: string[] = [];
    for (const f of projectFiles()) {
      if (BINARY.test(f)) continue;
      const lines = readFileSync(join(ROOT, f), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const s of FORBIDDEN) if (line.includes(s)) hits.push(`${f}:${i + 1}: ${s}`);
      });
    }
    expect(hits).toEqual([]);
  });

  it('every relative link in README.md and docs/ reaches a file inside the repository (and its heading)', () => {
    const files = markdownFiles();
    const broken = files.flatMap((f) => checkLinks(join(ROOT, f), ROOT));
    expect(broken).toEqual([]);
    // The pages that replaced the shared folder are linked from where readers start.
    const readme = extractLinks(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.target);
    expect(readme).toContain('docs/interface.md');
    expect(readme).toContain('docs/platforms/README.md');
  });
});

describe('the link checker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doclinks-'));
  const root = join(dir, 'repo');
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'outside.md'), '# Outside\n');
  writeFileSync(join(root, 'docs', 'target.md'), '# Title\n\n## `/v1/me` shape (8)\n\n## Repeat\n\n## Repeat\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (body: string) => {
    writeFileSync(join(root, 'README.md'), body);
    return checkLinks(join(root, 'README.md'), root).map((b) => `${b.target}: ${b.problem}`);
  };

  it('accepts links to existing files, directories, headings and external pages', () => {
    expect(
      check(
        '[a](docs/target.md) [b](docs/) [c](docs/target.md#v1me-shape-8) [d](docs/target.md#repeat-1)\n' +
          '[e](https://example.com/x) ![f](docs/target.md "title") [g](#top)\n<a id="top"></a>\n',
      ),
    ).toEqual([]);
  });

  it('reports a missing file, a missing heading, and a link leaving the repository even when the file exists', () => {
    expect(check('[a](docs/missing.md)\n[b](docs/target.md#nope)\n[c](../outside.md)\n')).toEqual([
      'docs/missing.md: no such file',
      'docs/target.md#nope: no heading with id #nope',
      '../outside.md: points outside the repository',
    ]);
  });

  it('ignores links inside code', () => {
    expect(check('`[a](missing.md)`\n\n```md\n[b](missing.md)\n```\n')).toEqual([]);
  });

  it('makes heading ids the way GitHub does', () => {
    expect(slugify('Status values beyond `connected` and `accepted`; transitions (5)')).toBe(
      'status-values-beyond-connected-and-accepted-transitions-5',
    );
    expect(slugify('Formats of `from`, `to`, `instrumentId` (6)')).toBe('formats-of-from-to-instrumentid-6');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });
});
