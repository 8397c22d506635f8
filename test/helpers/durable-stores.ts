import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePostgres, tempDatabase } from './postgres.js';

/** Where a store lives across a simulated process death: a PGlite data dir, or a PostgreSQL database. */
export interface DurableStore {
  where: { dataDir: string } | { databaseUrl: string };
  drop(): Promise<void>;
}

/**
 * Both stores for tests that restart the service on the same data: PGlite always, PostgreSQL when reachable
 * (required in CI, see requirePostgres). For `describe.each`.
 */
export async function durableStores(): Promise<Array<{ name: string; open: () => Promise<DurableStore> }>> {
  const pg = await requirePostgres();
  return [
    { name: 'PGlite', open: async () => { const dir = mkdtempSync(join(tmpdir(), 'ct-durable-')); return { where: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) }; } },
    ...(pg ? [{ name: 'PostgreSQL', open: async () => { const db = await tempDatabase(); return { where: { databaseUrl: db.url }, drop: db.drop }; } }] : []),
  ];
}
