import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

/** A link in a markdown file, with the 1-based line it is on. */
export interface MdLink {
  target: string;
  line: number;
}

/** One link that does not resolve, said in words a reader can act on. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  problem: string;
}

/**
 * Fenced code blocks and inline code spans are blanked (same length, newlines kept), so examples inside
 * them are not taken for links and line numbers still match.
 */
const blank = (s: string) => s.replace(/[^\n]/g, ' ');
const blankFences = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank);
const blankCode = (text: string) => blankFences(text).replace(/(`+)[^`\n]*?\1/g, blank);

/** Inline links and images `[text](target "title")`, and reference definitions `[id]: target`. */
export function extractLinks(markdown: string): MdLink[] {
  const text = blankCode(markdown);
  const out: MdLink[] = [];
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const clean = (raw: string) => {
    let t = raw.trim();
    if (t.startsWith('<') && t.endsWith('>')) t = t.slice(1, -1);
    else t = t.split(/\s+/)[0] ?? '';
    return t;
  };
  for (const m of text.matchAll(/!?\[[^\]\n]*\]\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)/g)) {
    out.push({ target: clean(m[1] ?? ''), line: lineAt(m.index ?? 0) });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*(\S+)/gm)) {
    out.push({ target: clean(m[1] ?? ''), line: lineAt(m.index ?? 0) });
  }
  return out.filter((l) => l.target.length > 0);
}

/** GitHub's heading ids: lower case, punctuation dropped (letters, digits, `-`, `_` kept), spaces to `-`. */
export function slugify(heading: string): string {
  const plain = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return plain.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Every anchor a markdown file offers: heading ids (with GitHub's -1, -2 for repeats) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  // Only fences are blanked: code spans in a heading are part of its id.
  const text = blankFences(markdown);
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slugify(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)=["']([^"']+)["']/g)) anchors.add(m[1] ?? '');
  return anchors;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Checks every relative link of one markdown file: it must stay inside `root` (a cloner has nothing
 * outside it, even where this machine does), reach an existing file or directory, and, when it names a
 * heading of a markdown file, that heading must exist.
 */
export function checkLinks(file: string, root: string): BrokenLink[] {
  const markdown = readFileSync(file, 'utf8');
  const broken: BrokenLink[] = [];
  const rel = relative(root, file);
  for (const { target, line } of extractLinks(markdown)) {
    if (EXTERNAL.test(target) || target.startsWith('//')) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURI(hash >= 0 ? target.slice(0, hash) : target);
    const fragment = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : '';
    const fail = (problem: string) => broken.push({ file: rel, line, target, problem });
    if (isAbsolute(pathPart)) {
      fail('absolute path: use a path relative to the file');
      continue;
    }
    const dest = pathPart === '' ? file : resolve(dirname(file), pathPart);
    const inside = relative(root, dest);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      fail('points outside the repository');
      continue;
    }
    if (!existsSync(dest)) {
      fail('no such file');
      continue;
    }
    if (fragment && dest.endsWith('.md') && statSync(dest).isFile()) {
      if (!anchorsOf(readFileSync(dest, 'utf8')).has(fragment)) fail(`no heading with id #${fragment}`);
    }
  }
  return broken;
}
