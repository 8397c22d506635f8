import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase, runMigrations, storeTemplate, storeTemplateTarball } from './db.js';

/**
 * `node dist/src/store/make-template.js`, a step of the build (scripts/build.mjs): the empty, migrated PGlite cluster
 * a new embedded data dir is copied from (see fromTemplate in db.ts), and the same cluster as a tarball, which an
 * in-memory store loads instead of running initdb. Each made beside and renamed into place.
 */
const template = storeTemplate();
const tarball = storeTemplateTarball();
const dir = mkdtempSync(join(dirname(template), '.pgdata-'));
try {
  // No flushes: the build's template only has to be complete, and a new data dir's copy of it is flushed (db.ts).
  // From an empty cluster, not from the template it replaces: a template that missed a migration (one merged with
  // an older journal time than one it had) would pass the gap on, since drizzle applies only newer times.
  const db = await openDatabase({ dataDir: dir, embeddedFsync: false, migrate: false });
  await runMigrations(db);
  await db.close();
  const pg = await PGlite.create({ dataDir: join(dir, 'pgdata') });
  const dump = await pg.dumpDataDir('none');
  await pg.close();
  writeFileSync(join(dir, 'pgdata.tar'), Buffer.from(await dump.arrayBuffer()));
  rmSync(template, { recursive: true, force: true });
  renameSync(join(dir, 'pgdata'), template);
  renameSync(join(dir, 'pgdata.tar'), tarball);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
