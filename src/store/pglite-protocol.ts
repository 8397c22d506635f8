/**
 * The messages between the main thread's PGlite stand-in (pglite-remote.ts) and the worker thread that runs
 * PGlite (pglite-worker.ts). Only values the structured clone carries: parsers are functions, so a query names the
 * type ids whose text is kept as is (the only parsers drizzle's driver passes) instead of sending them.
 */

export interface WorkerStart {
  /** The cluster's folder; null for ':memory:'. */
  dataDir: string | null;
  /** An in-memory cluster loads this tarball of the build's template instead of running initdb. */
  loadTarball?: string;
  startParams: string[];
  /**
   * The data dir's files through DurableNodeFS (pglite-durable-fs.ts): PostgreSQL's fsync reaches the host. Set
   * with fsync on (db.ts); PGlite's own NODEFS flushes nothing.
   */
  hostFlush?: boolean;
  /** PGlite's WebAssembly, compiled once per process and shared by every worker (compiling it took seconds). */
  wasmModule?: WebAssembly.Module;
}

export type Request =
  | {
      id: number;
      op: 'query';
      /** The transaction the statement belongs to; none for a statement on its own. */
      tx?: number;
      sql: string;
      params: unknown[];
      rowMode?: 'array' | 'object';
      /** Type ids returned as PostgreSQL's text (drizzle's identity parsers: timestamps, intervals, dates). */
      rawOids?: number[];
      /** Run as this named prepared statement (named-statement.ts names the text): parsed once per worker. */
      name?: string;
    }
  | { id: number; op: 'exec'; tx?: number; sql: string; rawOids?: number[] }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' }
  /** How many times the worker's PGlite flushed a file on the host (DurableNodeFS), since the thread started. */
  | { id: number; op: 'flushes' };

/** A request before the client numbers it. */
export type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

/** A PGlite error as plain data: its SQLSTATE (`code`), constraint, detail and the rest of its own fields. */
export interface ErrorData {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export type Response =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: ErrorData }
  /** The worker's first message: PGlite is open (or could not be). */
  /** With the WebAssembly when the worker compiled it (no module was given): the next opens share it. */
  | { id: 0; ready: true; wasmModule?: WebAssembly.Module }
  | { id: 0; ready: false; error: ErrorData };
