import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/cli-command.js';

const run = promisify(execFile);
let dir: string;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [...CLI, ...args, '--data-dir', dir], {
      env: { ...process.env, DATABASE_URL: '' },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ct-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('copytrade CLI (admin commands on the embedded store)', () => {
  it('creates a user, a token and keys, with --json outputs scripts rely on', async () => {
    const u = await cli('users', 'create', '--email', 'ops@example.test', '--password', 'long-enough-pw', '--json');
    expect(u.code, u.stderr).toBe(0);
    expect(JSON.parse(u.stdout)).toEqual({ id: expect.stringMatching(/^usr_/), email: 'ops@example.test' });
    const t = await cli('tokens', 'create', '--email', 'ops@example.test', '--json');
    expect(JSON.parse(t.stdout)).toMatchObject({ accessToken: expect.stringMatching(/^ctat_/) });
    const k = JSON.parse((await cli('keys', 'create', '--email', 'ops@example.test', '--json')).stdout);
    expect(k).toMatchObject({ id: expect.stringMatching(/^key_/), apiKey: expect.stringMatching(/^ctk_/) });
    const rotated = JSON.parse(
      (await cli('keys', 'rotate', '--email', 'ops@example.test', '--id', k.id, '--overlap', '60', '--json')).stdout,
    );
    expect(rotated).toMatchObject({ previousId: k.id, apiKey: expect.stringMatching(/^ctk_/) });
    const list = JSON.parse((await cli('keys', 'list', '--email', 'ops@example.test', '--json')).stdout);
    expect(list).toHaveLength(2);
    expect(JSON.stringify(list)).not.toContain(k.apiKey);
    const revoked = await cli('keys', 'revoke', '--email', 'ops@example.test', '--id', rotated.id, '--json');
    expect(revoked.code, revoked.stderr).toBe(0);
    // Six CLI processes, each compiling with tsx and opening PGlite: over a minute on a busy 2-core machine.
  }, 180_000);

  it("sets a key's dedicated limits and resets a password (revoking the user's access tokens)", async () => {
    const k = JSON.parse((await cli('keys', 'create', '--email', 'ops@example.test', '--json')).stdout);
    const limited = await cli('keys', 'limit', '--id', k.id, '--writes', '500', '--json');
    expect(limited.code, limited.stderr).toBe(0);
    expect(JSON.parse(limited.stdout)).toEqual({
      id: k.id,
      writes: 500,
      reads: 600,
      windowSec: 60,
      dedicated: { writes: true, reads: false },
    });
    expect((await cli('keys', 'limit', '--id', k.id, '--reads', '0')).stderr).toContain(
      '--reads must be a whole number',
    );
    const reset = await cli(
      'users',
      'reset-password',
      '--email',
      'ops@example.test',
      '--password',
      'another-long-pw',
      '--json',
    );
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ email: 'ops@example.test', tokensRevoked: 1 });
  }, 180_000);

  it('exits non-zero with a clear message on bad input', async () => {
    const dup = await cli('users', 'create', '--email', 'ops@example.test', '--password', 'long-enough-pw');
    expect(dup.code).not.toBe(0);
    expect(dup.stderr).toContain('already exists');
    const short = await cli('users', 'create', '--email', 'x@example.test', '--password', 'short');
    expect(short.stderr).toContain('at least 8 characters');
    const missing = await cli('tokens', 'create', '--email', 'nobody@example.test');
    expect(missing.stderr).toContain('no user with email');
    const noFlag = await cli('keys', 'create');
    expect(noFlag.code).not.toBe(0);
    expect(noFlag.stderr).toContain("required option '--email <email>'");
  }, 180_000);

  it('says clearly when the data dir is in use by a running server', async () => {
    writeFileSync(join(dir, 'copytrade.lock'), String(process.ppid));
    try {
      const r = await cli('users', 'create', '--email', 'y@example.test', '--password', 'long-enough-pw');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/in use by process \d+ .*single-process/);
    } finally {
      rmSync(join(dir, 'copytrade.lock'), { force: true });
    }
  }, 60_000);

  it('an admin command given no store refuses instead of creating an empty one in ./.copytrade', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'ct-cli-nodir-'));
    try {
      const r = await run(
        process.execPath,
        [...CLI, 'users', 'create', '--email', 'z@example.test', '--password', 'long-enough-pw'],
        {
          cwd: elsewhere,
          env: {
            ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'COPYTRADE_DATA_DIR')),
            DATABASE_URL: '',
          },
        },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('pass --data-dir DIR');
      expect(r.stderr).toContain('Nothing was created');
      expect(existsSync(join(elsewhere, '.copytrade'))).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 60_000);

  it("npx copytrade runs the clone's own launcher from node_modules/.bin, never an install into the npx cache", async () => {
    // --no-install: npx fails rather than install anything, so a pass means it ran the local link.
    const r = await run('npx', ['--no-install', 'copytrade', '--help'], { cwd: process.cwd() });
    expect(r.stdout).toContain('Usage: copytrade');
    expect(r.stderr).not.toContain('building');
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'));
    // A `bin` of this name makes npx install the project into its cache and run `prepare` (scripts/link-bin.mjs).
    expect(pkg.bin).toBeUndefined();
    expect(pkg.scripts.prepare).toContain('scripts/link-bin.mjs');
  }, 60_000);
});
