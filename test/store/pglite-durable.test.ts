import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/store/db.js';
import { addHostFlush, hostFlushes } from '../../src/store/pglite-durable-fs.js';
import type { RemotePglite } from '../../src/store/pglite-remote.js';

/**
 * Issue 43, item 7: PGlite's own file system never flushed (strace: 0 fsync/fdatasync for an open and 50 commits),
 * while the store said "fsync on". Each commit of the default embedded store must now flush its WAL on the host.
 * Counted through the flush hook (the worker's count crosses as a message; on the main thread it is this process's):
 * a store opened on PGlite's plain file system, or a commit that did not reach the hook, counts 0.
 */
const COMMITS = 20;

async function commits(database: Database, n: number): Promise<void> {
  await database.db.execute(sql`create table if not exists flush_probe (id serial primary key, v text)`);
  for (let i = 0; i < n; i++)
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into flush_probe (v) values (${`row ${i}`})`);
    });
}

describe('the embedded store flushes each commit to disk (fsync on, the default)', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-durable-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('in its worker thread: one host flush per commit, and the rows are there after a reopen', async () => {
    const dir = fresh();
    let database = await openDatabase({ dataDir: dir });
    const client = (database.db as unknown as { $client: RemotePglite }).$client;
    try {
      await commits(database, 1);
      const before = await client.hostFlushes();
      await commits(database, COMMITS);
      const flushed = (await client.hostFlushes()) - before;
      // The WAL's fdatasync at each commit; a checkpoint or a new WAL segment may add a few.
      expect(flushed).toBeGreaterThanOrEqual(COMMITS);
      expect(flushed).toBeLessThan(COMMITS + 10);
    } finally {
      await database.close();
    }
    database = await openDatabase({ dataDir: dir });
    try {
      const rows = await database.db.execute(sql`select count(*)::int as n from flush_probe`);
      expect((rows as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(COMMITS + 1);
    } finally {
      await database.close();
    }
  }, 120_000);

  it('on the main thread (benchmarks) the same, and with fsync off none', async () => {
    const on = await openDatabase({ dataDir: fresh(), embeddedOnMainThread: true });
    try {
      await commits(on, 1);
      const before = hostFlushes.count;
      await commits(on, COMMITS);
      expect(hostFlushes.count - before).toBeGreaterThanOrEqual(COMMITS);
    } finally {
      await on.close();
    }
    const off = await openDatabase({ dataDir: fresh(), embeddedOnMainThread: true, embeddedFsync: false });
    try {
      const before = hostFlushes.count;
      await commits(off, COMMITS);
      expect(hostFlushes.count - before).toBe(0);
    } finally {
      await off.close();
    }
  }, 120_000);

  it("a host flush's error reaches PostgreSQL as its errno, not as a JavaScript exception", () => {
    const errnoOf: Record<string, number> = { EIO: 29 };
    class ErrnoError extends Error {
      constructor(readonly errno: number) {
        super(`errno ${errno}`);
      }
    }
    const mod = {
      FS: { isDir: (mode: number) => mode === 1 },
      NODEFS: {
        stream_ops: {} as Record<string, unknown>,
        tryFSOperation<T>(fn: () => T): T {
          try {
            return fn();
          } catch (e) {
            throw new ErrnoError(errnoOf[(e as { code: string }).code] ?? 28);
          }
        },
      },
    };
    const seen: [number, boolean][] = [];
    addHostFlush(mod, (fd, dir) => {
      seen.push([fd, dir]);
      if (fd === 13) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    });
    const fsync = mod.NODEFS.stream_ops.fsync as (s: { nfd: number; node: { mode: number } }) => number;
    expect(fsync({ nfd: 7, node: { mode: 0 } })).toBe(0);
    expect(fsync({ nfd: 8, node: { mode: 1 } })).toBe(0);
    expect(() => fsync({ nfd: 13, node: { mode: 0 } })).toThrow(expect.objectContaining({ errno: 29 }));
    expect(seen).toEqual([
      [7, false],
      [8, true],
      [13, false],
    ]);
  });
});
