import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, exited, firstJson, killStarted, startedPids } from './helpers/cli-process.js';
import { runCli } from './helpers/cli-run.js';

/** Issue 14, start-up: what a newcomer and their scripts see when `copytrade serve` starts. */
const root = mkdtempSync(join(tmpdir(), 'ct-serve-start-'));
afterAll(() => {
  killStarted();
  rmSync(root, { recursive: true, force: true });
});

const listen = (port = 0) =>
  new Promise<Server>((resolve) => {
    const s = createServer().listen(port, '127.0.0.1', () => resolve(s));
  });

describe('copytrade serve start-up', () => {
  it('a port already taken fails first: a clear message, exit non-zero, nothing created in the data dir', {
    timeout: 120_000,
  }, async () => {
    const taken = await listen();
    const port = (taken.address() as { port: number }).port;
    const dir = join(root, 'taken');
    try {
      const r = await runCli(['serve', '--demo', '--port', String(port), '--data-dir', dir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`copytrade: port_in_use: port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toContain('--port N');
      // Before the simulator, the store and the demo: the data dir was not even created.
      expect(existsSync(dir)).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('says "Server listening" only once demo-credentials.json is written (a script may read it at once)', {
    timeout: 240_000,
  }, async () => {
    const dir = join(root, 'creds');
    const child = cli(['serve', '--demo', '--port', '0', '--data-dir', dir], { LOG_LEVEL: 'info' });
    const seen = await new Promise<{ url: string; creds: { baseUrl: string; apiKey: string } | null }>(
      (resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`exited ${code} before listening`)));
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const m = /Server listening at (http:\/\/\S+?)"/.exec(line);
          if (!m) return;
          // Read in the same tick as the line, as a shell script would right after seeing it.
          const file = join(dir, 'demo-credentials.json');
          resolve({ url: m[1]!, creds: existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null });
        });
      },
    );
    expect(seen.creds).toMatchObject({ baseUrl: seen.url, apiKey: expect.stringMatching(/^ctk_/) });
    const simPid = JSON.parse(readFileSync(join(dir, 'simulator', 'endpoints.json'), 'utf8')).pid as number;
    startedPids.push(simPid);
    const res = await fetch(`${seen.url}/v1/accounts`, { headers: { authorization: `Bearer ${seen.creds!.apiKey}` } });
    expect(res.status).toBe(200);
    child.kill('SIGTERM');
    await exited(child);
  });

  it('admin commands work while the server holds the embedded store, through its operator listener (token file 0600)', {
    timeout: 240_000,
  }, async () => {
    const dir = join(root, 'operator');
    const child = cli(['serve', '--port', '0', '--data-dir', dir, '--json']);
    const s = await firstJson<{ baseUrl: string; v1BaseUrl: string }>(child, 'baseUrl');
    const file = join(dir, 'operator.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const user = await runCli([
      'users',
      'create',
      '--email',
      'ops@example.test',
      '--password',
      'long-enough-pw',
      '--data-dir',
      dir,
      '--json',
    ]);
    expect(user.code, user.stderr).toBe(0);
    expect(JSON.parse(user.stdout)).toEqual({ id: expect.stringMatching(/^usr_/), email: 'ops@example.test' });
    const key = await runCli(['keys', 'create', '--email', 'ops@example.test', '--data-dir', dir, '--json']);
    expect(key.code, key.stderr).toBe(0);
    const apiKey = JSON.parse(key.stdout).apiKey as string;
    // The running server knows the key at once: it was made in its own store.
    const accounts = await runCli(['accounts', 'list', '--json'], {
      COPYTRADE_URL: s.v1BaseUrl,
      COPYTRADE_API_KEY: apiKey,
    });
    expect(accounts.code, accounts.stderr).toBe(0);
    expect(JSON.parse(accounts.stdout)).toEqual({ accounts: [] });
    // Errors keep their code through the listener.
    const dup = await runCli([
      'users',
      'create',
      '--email',
      'ops@example.test',
      '--password',
      'long-enough-pw',
      '--data-dir',
      dir,
    ]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^copytrade: conflict: .*already exists/);

    // Only the token in the file opens it.
    const { url } = JSON.parse(readFileSync(file, 'utf8')) as { url: string };
    const wrong = await fetch(`${url}/operator/ops/users.create`, {
      method: 'POST',
      headers: { authorization: 'Bearer ctop_wrong', 'content-type': 'application/json' },
      body: '{"email":"x@example.test","password":"long-enough-pw"}',
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: 'unauthorized' });

    child.kill('SIGTERM');
    await exited(child);
    expect(existsSync(file)).toBe(false);
  });
});
