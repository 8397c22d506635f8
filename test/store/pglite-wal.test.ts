import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';

/**
 * Issue 12: through PGlite's file system layer, filling each new 16 MB WAL segment with zeros took 50-70 ms inside
 * the statement that crossed into it (the 1000-Slave copy's p99). The embedded store creates segments sparse.
 */
describe('the embedded store creates WAL segments without filling them with zeros', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-wal-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the segment a switch starts holds only what was written to it', async () => {
    const store = await Store.open({ dataDir: dir });
    try {
      const db = store.database.db;
      const wal = join(dir, 'pgdata', 'pg_wal');
      const before = new Set(readdirSync(wal));
      await db.execute(sql`select pg_switch_wal()`);
      // A commit after the switch writes its records into the next segment, created now.
      await db.execute(sql`create table wal_probe (id int)`);
      await db.execute(sql`insert into wal_probe values (1)`);
      const created = readdirSync(wal).filter((f) => /^[0-9A-F]{24}$/.test(f) && !before.has(f));
      expect(created.length).toBeGreaterThan(0);
      for (const f of created) {
        const st = statSync(join(wal, f));
        expect(st.size).toBe(16 * 1024 * 1024);
        // Zero-filled, all 16 MB are on disk; sparse, a few blocks.
        expect(st.blocks * 512, f).toBeLessThan(2 * 1024 * 1024);
      }
    } finally {
      await store.close();
    }
  }, 60_000);
});
