import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/store.js';
import { runCli } from './helpers/cli-run.js';

/** The operator's people commands on the embedded store (docs/people.md): roles on a group, a second factor reset. */
let dir: string;
let groupId: string;
let viewerId: string;
const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ct-cli-people-'));
  const store = await Store.open({ dataDir: dir });
  const owner = await store.users.create('owner@example.test', 'x');
  viewerId = (await store.users.create('viewer@example.test', 'x')).id;
  groupId = (await store.accounts.createGroup(owner.id, 'clients')).id;
  await store.secondFactor.setPending(viewerId, 'v2.sealed');
  await store.secondFactor.enable(viewerId, 1, ['h']);
  await store.close();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('copytrade access and users (people)', () => {
  it('grants, lists and revokes a role on a group; resets a second factor', async () => {
    const g = await cli(
      'access',
      'grant',
      '--group',
      groupId,
      '--user',
      'viewer@example.test',
      '--role',
      'read_only',
      '--json',
    );
    expect(g.code, g.stderr).toBe(0);
    expect(JSON.parse(g.stdout)).toMatchObject({
      email: 'viewer@example.test',
      role: 'read_only',
      resourceId: groupId,
    });
    const list = await cli('access', 'list', '--group', groupId);
    expect(list.stdout).toMatch(/viewer@example\.test\s+read_only/);
    const bad = await cli('access', 'grant', '--group', groupId, '--user', 'viewer@example.test', '--role', 'admin');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('role must be one of owner, trader, read_only');
    expect((await cli('access', 'revoke', '--group', groupId, '--user', viewerId)).code).toBe(0);
    const reset = await cli('users', 'reset-second-factor', '--email', 'viewer@example.test');
    expect(reset.code, reset.stderr).toBe(0);
    const store = await Store.open({ dataDir: dir });
    try {
      expect(await store.grants.ofResource('group', groupId)).toEqual([]);
      expect((await store.secondFactor.get(viewerId))?.enabledAt).toBeNull();
    } finally {
      await store.close();
    }
    // Five CLI processes, each compiling with tsx and opening PGlite: a minute or more on a busy 2-core machine.
  }, 240_000);
});
