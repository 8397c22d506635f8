import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.js';
import { cli, exited, firstJson, killStarted } from './helpers/cli-process.js';

/** `PORT` and `HOST` are honoured by `copytrade serve` (the README says so); a flag still wins. */
const dir = mkdtempSync(join(tmpdir(), 'ct-serve-env-'));
afterAll(() => {
  killStarted();
  rmSync(dir, { recursive: true, force: true });
});

describe('copytrade serve and the environment', () => {
  it('listens on $PORT when no --port is given, and --port wins over it', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const a = cli(['serve', '--data-dir', join(dir, 'a'), '--json'], { PORT: String(port), HOST: '127.0.0.1' });
    const s = await firstJson<{ baseUrl: string }>(a, 'baseUrl');
    expect(new URL(s.baseUrl).port).toBe(String(port));
    a.kill('SIGTERM');
    await exited(a);

    const other = await freePort();
    const b = cli(['serve', '--data-dir', join(dir, 'b'), '--port', String(other), '--json'], { PORT: String(port) });
    const t = await firstJson<{ baseUrl: string }>(b, 'baseUrl');
    expect(new URL(t.baseUrl).port).toBe(String(other));
    b.kill('SIGTERM');
    await exited(b);
  });
});
