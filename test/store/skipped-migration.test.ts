import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, runMigrations, type Database } from '../../src/store/db.js';

/**
 * Drizzle applies only migrations newer (by journal time) than the last one applied. Two branches merged in the
 * other order left migration 0027 behind 0028 on a store that had 0028: skipped without a word, and the service
 * failed at its first query of a missing column (seen on the build's own template, copied into every new store).
 * A start now names the skipped migration; an unmigrated open gets initdb's empty cluster, never the template.
 */
let db: Database | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await db?.close();
  db = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a migration the store skipped', { timeout: 60_000 }, () => {
  it('an unmigrated data dir is an empty cluster, and a journal entry without its row refuses the start by name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-skipped-'));
    dirs.push(dir);
    db = await openDatabase({ dataDir: dir, embeddedFsync: false, migrate: false });
    const before = (await db.db.execute(sql`select to_regclass('drizzle.__drizzle_migrations') as t`)) as unknown as {
      rows: Array<{ t: string | null }>;
    };
    expect(before.rows[0]!.t).toBeNull();
    await runMigrations(db);
    // As a store that had 0028 applied before 0027 was merged: 0027's row (and its tables) never came.
    await db.db.execute(sql`delete from drizzle.__drizzle_migrations where created_at = 1797300000000`);
    await expect(runMigrations(db)).rejects.toThrow(/skipped migration 0027_people/);
  });
});
