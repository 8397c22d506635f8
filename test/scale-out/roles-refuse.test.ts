import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';

describe('copytrade api and worker need PostgreSQL and NATS', () => {
  it('refuse on the embedded store with a clear message, before opening anything', { timeout: 60_000 }, async () => {
    const [api, worker] = await Promise.all([
      runCli(['api', '--port', '0'], { DATABASE_URL: '', NATS_URL: '' }),
      runCli(['worker'], { DATABASE_URL: 'postgres://127.0.0.1:1/none', NATS_URL: '' }),
    ]);
    expect(api.code).toBe(1);
    expect(api.stderr).toMatch(/copytrade api .*set DATABASE_URL and NATS_URL .*use `copytrade serve`/);
    expect(worker.code).toBe(1);
    expect(worker.stderr).toMatch(/copytrade worker .*set NATS_URL /);
    expect(worker.stderr).not.toMatch(/DATABASE_URL and/);
  });
});
