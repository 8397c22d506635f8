import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrationsFolder, openDatabase, type Database } from '../../src/store/db.js';
import { tempDatabase } from './postgres.js';

/** Applies the migrations that come before `tag` (e.g. '0006'), so a test can fill the old shape and then upgrade. */
export async function migrateBefore(database: Database, tag: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-mig-'));
  try {
    cpSync(migrationsFolder(), dir, { recursive: true });
    const journalFile = join(dir, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
    journal.entries = journal.entries.filter((e) => e.tag < tag);
    writeFileSync(journalFile, JSON.stringify(journal));
    if (database.kind === 'pglite') await migratePglite(database.db as never, { migrationsFolder: dir });
    else await migratePg(database.db as never, { migrationsFolder: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An unmigrated database of each kind, for migration tests. */
export const unmigrated = {
  pglite: async () => ({
    database: await openDatabase({ dataDir: ':memory:', migrate: false, embeddedFsync: false }),
    cleanup: async () => undefined,
  }),
  postgres: async () => {
    const db = await tempDatabase();
    return {
      database: await openDatabase({ dataDir: ':unused:', databaseUrl: db.url, migrate: false }),
      cleanup: db.drop,
    };
  },
};
