import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openDatabase, storeTemplate } from './db.js';

/**
 * `node dist/src/store/make-template.js`, a step of the build (scripts/build.mjs): the empty, migrated PGlite cluster
 * a new embedded data dir is copied from (see fromTemplate in db.ts). Made beside and renamed into place.
 */
const template = storeTemplate();
const dir = mkdtempSync(join(dirname(template), '.pgdata-'));
try {
  const db = await openDatabase({ dataDir: dir });
  await db.close();
  rmSync(template, { recursive: true, force: true });
  renameSync(join(dir, 'pgdata'), template);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
