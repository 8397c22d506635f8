import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, cli, exited, firstJson, killStarted, npmStart, track, until } from './helpers/cli-process.js';
import { runCli } from './helpers/cli-run.js';

/** Issue 14, start-up: what a newcomer and their scripts see when `copytrade serve` starts. */
const root = mkdtempSync(join(tmpdir(), 'ct-serve-start-'));
afterAll(() => {
  killStarted();
  rmSync(root, { recursive: true, force: true });
});

/** True while something accepts connections on the port. */
const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
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
    track(simPid);
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

  it('SIGTERM to the `npm start` job (its whole process group, as `kill %1`) stops the service and the simulator it started (port free, child gone)', {
    timeout: 300_000,
  }, async () => {
    const dir = join(root, 'npm-start');
    const free = await listen();
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    const npm = npmStart(['--port', String(port), '--data-dir', dir], {}, { ownGroup: true });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const seen = (c: Buffer) => {
        output += String(c);
        if (output.includes(`Server listening at http://127.0.0.1:${port}`)) resolve();
      };
      npm.stdout!.on('data', seen);
      npm.stderr!.on('data', seen);
      npm.once('exit', (code) =>
        reject(new Error(`npm start exited ${code} before listening: ${output.slice(-2000)}`)),
      );
    });
    const simPid = JSON.parse(readFileSync(join(dir, 'simulator', 'endpoints.json'), 'utf8')).pid as number;
    const servicePid = Number(/"pid":(\d+)/.exec(output)![1]);
    track(simPid, servicePid);
    expect(servicePid).not.toBe(npm.pid);
    expect(await accepting(port)).toBe(true);

    // npm runs the script through `sh -c`; the script's `exec` makes node that shell. The group's signal reaches the
    // service twice: directly and through npm's forwarding. It must still be one shutdown that stops the simulator.
    // At once, as a script that waited for the line would: the service listens for signals before it logs it.
    process.kill(-npm.pid!, 'SIGTERM');
    await until('the port is free', async () => !(await accepting(port)), 60_000);
    await until('the service process is gone', () => !alive(servicePid), 60_000);
    await until('the simulator process is gone', () => !alive(simPid), 60_000);
    await until('npm has exited', () => npm.exitCode !== null || npm.signalCode !== null, 60_000);
    expect(output).toContain('shutting down');
    expect(output).not.toContain('second signal');
  });
});
