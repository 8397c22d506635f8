import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * deploy/compose.yaml must load in Debian 12's docker-compose 1.29 as well as Compose v2. Neither runs in CI (no
 * container registry, and docker-compose pulls in docker.io), so this reads the file's shape: the keys each level
 * has, against the set 1.29's schema accepts, and every file it reads named in its header. `docker-compose config
 * -q` (1.29) was run on it by hand (docs/operations.md, With containers).
 */
const TEXT = readFileSync(fileURLToPath(new URL('../../deploy/compose.yaml', import.meta.url)), 'utf8');

interface Entry {
  path: string[];
  value: string;
}

/** Key paths of a block-style YAML file written with 2-space indents (the file's own style; checked below). */
function keyPaths(text: string): Entry[] {
  const stack: { indent: number; key: string }[] = [];
  const out: Entry[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const m = /^( *)(?:- )?([\w.-]+):(?:\s+(.*))?$/.exec(line);
    if (!m) continue; // a list item or a continuation
    const indent = m[1]!.length;
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    stack.push({ indent, key: m[2]! });
    out.push({ path: stack.map((s) => s.key), value: (m[3] ?? '').trim() });
  }
  return out;
}

// docker-compose 1.29's config schema (compose_spec.json), the keys this file may use.
const TOP = ['services', 'volumes', 'secrets', 'networks', 'configs'];
const SERVICE = [
  'image',
  'command',
  'entrypoint',
  'environment',
  'env_file',
  'working_dir',
  'volumes',
  'secrets',
  'depends_on',
  'ports',
  'stop_signal',
  'stop_grace_period',
  'healthcheck',
];

describe('deploy/compose.yaml keeps to what docker-compose 1.29 and Compose v2 both load', () => {
  const keys = keyPaths(TEXT);
  const at = (depth: number) => keys.filter((k) => k.path.length === depth);

  it('is read as expected (the reader finds the services and their keys)', () => {
    expect(
      at(2)
        .filter((k) => k.path[0] === 'services')
        .map((k) => k.path[1]),
    ).toEqual(['postgres', 'nats', 'copytrade']);
    expect(keys.some((k) => k.path.join('.') === 'services.copytrade.env_file')).toBe(true);
  });

  it('has no top-level name (1.29 refuses it) nor version (v2 calls it obsolete), only keys 1.29 knows', () => {
    const top = at(1).map((k) => k.path[0]!);
    expect(top).not.toContain('name');
    expect(top).not.toContain('version');
    expect(top.filter((k) => !TOP.includes(k) && !k.startsWith('x-'))).toEqual([]);
    const serviceKeys = at(3).filter((k) => k.path[0] === 'services');
    expect(serviceKeys.filter((k) => !SERVICE.includes(k.path[2]!)).map((k) => k.path.join('.'))).toEqual([]);
  });

  it('names in its header every file it reads, and reads secrets from files, never from the file itself', () => {
    const header = TEXT.slice(0, TEXT.indexOf('\nservices:'));
    const read = [
      ...keys.filter((k) => k.path[0] === 'secrets' && k.path[2] === 'file').map((k) => k.value),
      ...[...TEXT.matchAll(/env_file: \[([^\]]+)\]/g)].flatMap((m) => m[1]!.split(',').map((f) => f.trim())),
      ...[...TEXT.matchAll(/^\s+- (\.\.?(?:\/[\w.-]*)?):/gm)].map((m) => m[1]!),
    ].map((f) => f.replace(/^\.\//, ''));
    expect(read.sort()).toEqual(['..', 'copytrade.env', 'pg_password', 'secret.key']);
    for (const f of read) expect(header).toMatch(new RegExp(`#\\s+${f.replace(/\./g, '\\.')}\\s`));
    expect(TEXT).not.toMatch(/PASSWORD:\s+\S|SECRET:\s+\S|TOKEN:\s+\S/);
  });
});
