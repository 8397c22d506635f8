import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { AppError } from '../domain/errors.js';
import { packageRoot } from '../config/package-root.js';
import { claimLockFile } from '../config/process-identity.js';
import { guardedPg } from './pg-guard.js';
import { RemotePglite } from './pglite-remote.js';
import { isStoreUnavailable, storeUnavailable, unavailableReason } from './unavailable.js';
import * as schema from './schema.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Human-readable location for logs (never includes a password). */
  location: string;
  /** PostgreSQL only: the pool, for work that needs one session (the migration lock). */
  pool?: pg.Pool;
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
   * fsync of the embedded store. On by default: a copy intent must survive a power cut, not only a crash. PGlite's
   * own file system never flushes (its fsync and fdatasync stop in the WebAssembly), so on a data dir the store's
   * files go through DurableNodeFS (pglite-durable-fs.ts) and each commit fdatasyncs the WAL on the host.
   * Off (PGlite's own default) skips every flush: for tests and throwaway demos.
   */
  embeddedFsync?: boolean;
  /**
   * PostgreSQL: the server ends a session left idle inside a transaction this long. A worker sets it to its lease
   * TTL: a process paused in the middle of a fenced write holds the lease row's lock, and its successor could not
   * take the lease over until that transaction ends (it is rolled back, so the late write never lands).
   */
  idleInTransactionMs?: number;
  /**
   * Told the text of every statement the store sends (BEGIN and COMMIT left out on both drivers): benchmarks
   * count statements per copy with it. Never logged by the service: the text carries no values, but it is noise.
   */
  onStatement?: ((query: string, params: unknown[]) => void) | undefined;
  /**
   * Benchmarks only: run PGlite on the main thread, as before the worker thread (pglite-remote.ts), to measure
   * what the thread bought side by side in one run. The service never sets it.
   */
  embeddedOnMainThread?: boolean;
}

/** Drizzle's logger as a statement hook; transaction brackets are not counted (PGlite sends them unseen). */
function statementLogger(on: ((query: string, params: unknown[]) => void) | undefined) {
  if (!on) return {};
  return {
    logger: {
      logQuery(query: string, params: unknown[]) {
        if (!/^\s*(begin|commit|rollback)\b/i.test(query)) on(query, params);
      },
    },
  };
}

/**
 * PGlite's own start parameters, with fsync back on unless asked otherwise, and an 8 MB buffer cache instead
 * of 128 MB: the embedded store serves one user's accounts, and idle memory matters on small hosts. With fsync on,
 * the WAL is synced with fsync(), the one call DurableNodeFS carries to the host (emscripten's fdatasync does
 * nothing); the store must then be opened on that file system (startPglite).
 */
export function pgliteParams(fsync: boolean): string[] {
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
    // A new WAL segment is created with its last byte written, not 16 MB of zeros: through PGlite's file system
    // layer the zero fill took 50-70 ms inside whichever statement crossed into the segment (every few copies to
    // 1000 Slaves; a 1000-row insert's p99 75 -> 13-17 ms, docs/performance.md). The zero fill reserves disk space
    // ahead; without it, a full disk fails the write that needs the space (PostgreSQL stops, as it would then anyway).
    '-c',
    'wal_init_zero=off',
  ];
  if (fsync) params.push('-c', 'wal_sync_method=fsync');
  else params.splice(1, 0, '-F');
  return params;
}

export const migrationsFolder = () => join(packageRoot(), 'src', 'store', 'migrations');

/**
 * How long a PostgreSQL connect, or a wait for a free pooled connection, may take before it fails as
 * `store_unavailable`. Above any wait for one of the 10 pooled connections under load seen here.
 */
export const PG_CONNECT_TIMEOUT_MS = 10_000;

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const db = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.idleInTransactionMs, opts.onStatement)
    : await openPglite(
        opts.dataDir,
        opts.embeddedFsync ?? true,
        opts.onStatement,
        opts.embeddedOnMainThread,
        // Unmigrated (the migration tests apply them one by one): an empty cluster, not the migrated template.
        opts.migrate !== false,
      );
  if (opts.migrate !== false) {
    // A failed migration (the server went away during it, say) must not leave the pool open behind it.
    await runMigrations(db).catch(async (err: unknown) => {
      await db.close().catch(() => undefined);
      throw err;
    });
  }
  return db;
}

/**
 * Key of the session-level advisory lock that serialises migrations on one PostgreSQL database: 0x6374 is
 * "ct", then "migr" (any constant works; it must only differ from other advisory locks taken on the database).
 */
export const MIGRATION_LOCK_KEY = 0x6374_6d69_6772n;

export async function runMigrations(database: Database): Promise<void> {
  await migrate(database);
  await refuseSkippedMigrations(database);
}

/**
 * Drizzle applies only the migrations whose journal time is newer than the last one applied: a migration merged
 * with an older time than one a database already has is skipped without a word, and its tables and columns are
 * missing at the first query that needs them. Every journal entry must be applied; a start says which is not.
 */
async function refuseSkippedMigrations(database: Database): Promise<void> {
  const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string; when: number }>;
  };
  const res = (await database.db.execute(sql`select created_at from drizzle.__drizzle_migrations`)) as unknown as {
    rows: Array<{ created_at: string | number }>;
  };
  const applied = new Set(res.rows.map((r) => Number(r.created_at)));
  const skipped = journal.entries.filter((e) => !applied.has(e.when));
  if (skipped.length > 0)
    throw new Error(
      `the store skipped migration ${skipped.map((e) => e.tag).join(', ')}: its journal time is older than the newest one applied (a journal out of order); give it a time after the newest and start again`,
    );
}

async function migrate(database: Database): Promise<void> {
  const folder = migrationsFolder();
  if (database.kind === 'pglite') {
    await migratePglite(database.db as never, { migrationsFolder: folder });
    return;
  }
  // Loaded only for PostgreSQL, like the driver (openPostgres).
  const [{ migrate: migratePg }, { drizzle: drizzlePg }] = await Promise.all([
    import('drizzle-orm/node-postgres/migrator'),
    import('drizzle-orm/node-postgres'),
  ]);
  if (!database.pool) {
    await migratePg(database.db as never, { migrationsFolder: folder });
    return;
  }
  // Processes starting together on one database (a deploy of api and workers) migrate one at a time: the
  // first takes the lock and migrates, the others wait for it, then find nothing left to apply. The lock and
  // the migration share one session, so a process that dies mid-migration releases the lock with its
  // connection (and its migration transaction rolls back).
  // On any failure the session is destroyed, not pooled: a lock it might still hold goes with it.
  const client = await database.pool.connect();
  const key = MIGRATION_LOCK_KEY.toString();
  try {
    await client.query('select pg_advisory_lock($1)', [key]);
    await migratePg(drizzlePg({ client, schema }) as never, { migrationsFolder: folder });
    await client.query('select pg_advisory_unlock($1)', [key]);
    client.release();
  } catch (err) {
    client.release(err instanceof Error ? err : true);
    throw err;
  }
}

async function openPostgres(
  url: string,
  idleInTransactionMs?: number,
  onStatement?: (query: string, params: unknown[]) => void,
): Promise<Database> {
  // Loaded only for PostgreSQL: the embedded store's start (`npm start`) does not pay for the pg driver.
  const [{ default: pg }, { drizzle: drizzlePg }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
  ]);
  // Errors of a server that cannot be reached come out as `store_unavailable` (pg-guard.ts): a 503 to API
  // clients, a wait at start.
  const { Pool } = guardedPg(pg);
  const pool = new Pool({
    connectionString: url,
    max: 10,
    // A connect (or a wait for a free pooled connection) that has not finished by then fails, as
    // `store_unavailable`, instead of holding its request for as long as the network takes to give up (a
    // firewall dropping packets: minutes).
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    ...(idleInTransactionMs ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}),
  });
  // An idle connection the server dropped (restart, failover, admin) must not crash the process: the pool
  // opens a new one on next use, and queries in flight get their own error.
  pool.on('error', () => undefined);
  // The pool listens for errors only on idle connections. One checked out for a transaction whose session the
  // server ends while no statement runs (the idle-in-transaction timeout above, after the process was paused)
  // emits 'error' with no listener, and that ends the process: a worker died on waking instead of letting its
  // leases go. The transaction's next statement fails with the driver's error, and the pool drops the connection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  // Fail at once with a clear message instead of at the first query: `store_unavailable` (a caller may wait and
  // retry, roles/core-store.ts) when the server cannot be reached, the driver's own error otherwise (a refused
  // password, a database that does not exist).
  const client = await pool.connect().catch(async (err: unknown) => {
    await pool.end().catch(() => undefined);
    if (isStoreUnavailable(err))
      throw storeUnavailable(err, `cannot connect to PostgreSQL at ${redactUrl(url)}: ${unavailableReason(err)}`);
    throw err;
  });
  client.release();
  return {
    db: drizzlePg({ client: pool, schema, ...statementLogger(onStatement) }) as unknown as Db,
    kind: 'postgres',
    location: redactUrl(url),
    pool,
    close: () => pool.end(),
  };
}

/**
 * PGlite is single-process: two processes on one data dir would corrupt it. A lock file with our pid
 * guards it; a stale lock (its process is gone) is taken over.
 */
async function openPglite(
  dataDir: string,
  fsync: boolean,
  onStatement?: (query: string, params: unknown[]) => void,
  mainThread = false,
  migrated = true,
): Promise<Database> {
  if (dataDir === ':memory:') {
    const client = await startPglite(null, pgliteParams(false), mainThread, migrated ? memoryTemplate() : undefined);
    return {
      db: drizzlePglite({
        client: client as unknown as PGlite,
        schema,
        ...statementLogger(onStatement),
      }) as unknown as Db,
      kind: 'pglite',
      location: ':memory:',
      close: () => client.close(),
    };
  }
  mkdirSync(dataDir, { recursive: true });
  const lock = join(dataDir, 'copytrade.lock');
  acquireLock(lock, dataDir);
  try {
    const pgdata = join(dataDir, 'pgdata');
    // Unmigrated (the build's template, the migration tests): initdb's empty cluster, as in memory.
    if (migrated) await fromTemplate(pgdata, fsync);
    const client = await startPglite(pgdata, pgliteParams(fsync), mainThread, undefined, fsync);
    return {
      db: drizzlePglite({
        client: client as unknown as PGlite,
        schema,
        ...statementLogger(onStatement),
      }) as unknown as Db,
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

/**
 * PGlite in its worker thread (pglite-remote.ts), so SQL never holds the event loop; on the main thread only when a
 * benchmark asks, loaded then only. `hostFlush`: a data dir's files through DurableNodeFS, so fsync reaches the disk.
 */
async function startPglite(
  dataDir: string | null,
  startParams: string[],
  mainThread: boolean,
  tarball?: string,
  hostFlush = false,
) {
  const flush = hostFlush && dataDir !== null;
  if (!mainThread)
    return RemotePglite.start({ dataDir, startParams, hostFlush: flush, ...(tarball ? { loadTarball: tarball } : {}) });
  const [{ PGlite: Local }, { DurableNodeFS }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('./pglite-durable-fs.js'),
  ]);
  return Local.create({
    ...(dataDir ? (flush ? { fs: new DurableNodeFS(dataDir) } : { dataDir }) : {}),
    ...(tarball ? { loadDataDir: new Blob([readFileSync(tarball)]) } : {}),
    startParams,
  });
}

/** An empty, migrated PGlite cluster the build makes (scripts/build.mjs), in dist/ beside the code it matches. */
export const storeTemplate = () => join(packageRoot(), 'dist', 'pgdata-template');

/** The same cluster as one tarball (PGlite's dumpDataDir), which an in-memory store loads. */
export const storeTemplateTarball = () => `${storeTemplate()}.tar`;

/**
 * An in-memory store (tests, `--data-dir :memory:`) starts from the build's template too: loading the tarball took
 * 1.1 s where initdb in WebAssembly took 6.0 s (2026-11-23, one run each, load 5); tests start hundreds of them, and
 * at load 10-26 initdb took up to 19 s. Without a tarball (a checkout never built) PGlite runs initdb.
 */
function memoryTemplate(): string | undefined {
  const tarball = storeTemplateTarball();
  return existsSync(tarball) ? tarball : undefined;
}

/**
 * A new data dir starts as a copy of the build's template instead of running initdb: initdb in WebAssembly
 * took 11 s of a first `npm start` on the shared VM, the copy ~0.1 s. Copied beside and renamed into place, so a
 * start killed mid-copy leaves no half cluster; without a template (a checkout never built) PGlite runs initdb.
 * Migrations newer than the template still run after (runMigrations), so a stale template is only slower.
 * With fsync on, the copy is flushed before the rename and the rename after it: the first commits' WAL replays onto
 * these files, so a power cut in the first seconds must not leave them half written (0.1-0.3 s here, 1156 paths).
 */
async function fromTemplate(pgdata: string, fsync: boolean): Promise<void> {
  const template = storeTemplate();
  if (existsSync(pgdata) || !existsSync(join(template, 'PG_VERSION'))) return;
  const tmp = `${pgdata}.copying`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(template, tmp, { recursive: true });
  if (fsync) await flushTree(tmp);
  renameSync(tmp, pgdata);
  if (fsync) await flushPath(dirname(pgdata));
}

/** fsync of every file and folder under `root`, 16 at a time (one by one took 0.5-0.8 s for the template). */
async function flushTree(root: string): Promise<void> {
  const paths: string[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      else if (e.isFile()) paths.push(join(dir, e.name));
    }
    paths.push(dir);
  };
  await walk(root);
  let next = 0;
  const lane = async () => {
    while (next < paths.length) await flushPath(paths[next++] as string);
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}

async function flushPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function acquireLock(lock: string, dataDir: string): void {
  const holder = claimLockFile(lock);
  if (holder !== null) {
    throw new AppError(
      'data_dir_in_use',
      `the data dir ${dataDir} is in use by process ${holder} (the embedded store is single-process): stop that server first, or set DATABASE_URL to use PostgreSQL`,
    );
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
