import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { AppError } from '../domain/errors.js';
import { packageRoot } from '../config/package-root.js';
import * as schema from './schema.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Human-readable location for logs (never includes a password). */
  location: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL connection string; when set, the embedded store is not used. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded store, or ':memory:'. */
  dataDir: string;
  /** Apply pending migrations on open (default true). */
  migrate?: boolean;
  /**
   * fsync of the embedded store. On by default: a copy intent must survive a power cut, not only a crash.
   * Off (PGlite's own default) is several times faster for tests and throwaway demos.
   */
  embeddedFsync?: boolean;
  /**
   * PostgreSQL: the server ends a session left idle inside a transaction this long. A worker sets it to its lease
   * TTL: a process paused in the middle of a fenced write holds the lease row's lock, and its successor could not
   * take the lease over until that transaction ends (it is rolled back, so the late write never lands).
   */
  idleInTransactionMs?: number;
}

/**
 * PGlite's own start parameters, with fsync back on unless asked otherwise, and an 8 MB buffer cache instead
 * of 128 MB: the embedded store serves one user's accounts, and idle memory matters on small hosts.
 */
function pgliteParams(fsync: boolean): string[] {
  const params = [
    '--single',
    '-O',
    '-j',
    '-c',
    'search_path=public',
    '-c',
    'exit_on_error=false',
    '-c',
    'log_checkpoints=false',
    '-c',
    'max_worker_processes=0',
    '-c',
    'max_parallel_workers=0',
    '-c',
    'max_parallel_workers_per_gather=0',
    '-c',
    'io_method=sync',
    '-c',
    'max_parallel_maintenance_workers=0',
    '-c',
    'shared_buffers=8MB',
    '-c',
    'work_mem=4MB',
  ];
  if (!fsync) params.splice(1, 0, '-F');
  return params;
}

export const migrationsFolder = () => join(packageRoot(), 'src', 'store', 'migrations');

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const db = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.idleInTransactionMs)
    : await openPglite(opts.dataDir, opts.embeddedFsync ?? true);
  if (opts.migrate !== false) await runMigrations(db);
  return db;
}

export async function runMigrations(database: Database): Promise<void> {
  const folder = migrationsFolder();
  if (database.kind === 'pglite') await migratePglite(database.db as never, { migrationsFolder: folder });
  else await migratePg(database.db as never, { migrationsFolder: folder });
}

async function openPostgres(url: string, idleInTransactionMs?: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(idleInTransactionMs ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}),
  });
  // An idle connection the server dropped (restart, failover, admin) must not crash the process: the pool
  // opens a new one on next use, and queries in flight get their own error.
  pool.on('error', () => undefined);
  // Fail fast with a clear message instead of at the first query.
  const client = await pool.connect().catch((err: Error) => {
    throw new AppError('upstream_unavailable', `cannot connect to PostgreSQL at ${redactUrl(url)}: ${err.message}`);
  });
  client.release();
  return {
    db: drizzlePg({ client: pool, schema }) as unknown as Db,
    kind: 'postgres',
    location: redactUrl(url),
    close: () => pool.end(),
  };
}

/**
 * PGlite is single-process: two processes on one data dir would corrupt it. A lock file with our pid
 * guards it; a stale lock (its process is gone) is taken over.
 */
async function openPglite(dataDir: string, fsync: boolean): Promise<Database> {
  if (dataDir === ':memory:') {
    const client = await PGlite.create({ startParams: pgliteParams(false) });
    return {
      db: drizzlePglite({ client, schema }) as unknown as Db,
      kind: 'pglite',
      location: ':memory:',
      close: () => client.close(),
    };
  }
  mkdirSync(dataDir, { recursive: true });
  const lock = join(dataDir, 'copytrade.lock');
  acquireLock(lock, dataDir);
  try {
    const client = await PGlite.create(join(dataDir, 'pgdata'), { startParams: pgliteParams(fsync) });
    return {
      db: drizzlePglite({ client, schema }) as unknown as Db,
      kind: 'pglite',
      location: dataDir,
      close: async () => {
        await client.close();
        rmSync(lock, { force: true });
      },
    };
  } catch (err) {
    rmSync(lock, { force: true });
    throw err;
  }
}

function acquireLock(lock: string, dataDir: string): void {
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, 'utf8').trim());
    if (pid && pid !== process.pid && isAlive(pid)) {
      throw new AppError(
        'data_dir_in_use',
        `the data dir ${dataDir} is in use by process ${pid} (the embedded store is single-process): stop that server first, or set DATABASE_URL to use PostgreSQL`,
      );
    }
  }
  writeFileSync(lock, String(process.pid), { mode: 0o600 });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<database url>';
  }
}
