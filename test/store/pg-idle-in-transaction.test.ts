import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const ready = await requirePostgres();

/**
 * Seen in CI (failover-processes.test.ts, the SIGSTOP case): a worker stopped in the middle of a transaction woke
 * to "terminating connection due to idle-in-transaction timeout" (the worker sets that timeout to its lease TTL) on
 * a connection checked out of the pool, which has no error listener while checked out. The 'error' event went
 * unhandled and the worker died on waking, instead of letting its leases go.
 */
describe.runIf(ready)('PostgreSQL store: a session ended by the server inside a transaction', () => {
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await tempDatabase();
  });
  afterAll(async () => db?.drop());

  it('fails that transaction only: the process lives on', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(process.cwd(), 'test', 'store', 'fixtures', 'idle-in-transaction.ts')],
      { env: { ...process.env, DATABASE_URL: db.url }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += String(c);
    });
    child.stderr.on('data', (c) => {
      err += String(c);
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(err).not.toMatch(/idle-in-transaction timeout/);
    expect(code, err).toBe(0);
    // The transaction itself failed, with the driver's error, and nothing else did.
    expect(out).toMatch(/^survived: .+/m);
    expect(out).not.toMatch(/worked/);
  }, 60_000);
});
