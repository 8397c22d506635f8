import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { namedAs } from './statement-names.js';
import type { ErrorData, RequestBody, Response, WorkerStart } from './pglite-protocol.js';

/** What drizzle's PGlite driver reads of a result (see node_modules/drizzle-orm/pglite/session.js). */
export interface RemoteResults {
  rows: unknown[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
  command?: string;
  rowCount?: number;
}

interface QueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, (value: string, typeId?: number) => unknown>;
  serializers?: unknown;
  blob?: unknown;
}

/** The part of PGlite's client drizzle calls (query with parsers, exec, transaction) and close. */
export interface RemoteClient {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<RemoteResults>;
  exec(sql: string, options?: QueryOptions): Promise<RemoteResults[]>;
}

export interface RemoteTransaction extends RemoteClient {
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** Rebuilds a worker's error with its fields, so `code` ('23505'...) and `constraint` reach the code that checks them. */
function toError(data: ErrorData): Error {
  const err = new Error(data.message);
  err.name = data.name;
  Object.assign(err, data.fields);
  return err;
}

/**
 * drizzle passes identity parsers (timestamps, intervals and dates kept as PostgreSQL's text); functions cannot cross
 * to the worker, so a query names their type ids and the worker sets identity parsers for them. Any other parser
 * is refused loudly: the worker could not reproduce it.
 */
const described = new WeakMap<object, number[]>();
function rawOids(options: QueryOptions | undefined): number[] | undefined {
  if (!options) return undefined;
  if (options.serializers || options.blob)
    throw new Error('the embedded store runs in a worker thread: serializers and blobs cannot be sent to it');
  const parsers = options.parsers;
  if (!parsers) return undefined;
  let oids = described.get(parsers);
  if (!oids) {
    oids = Object.entries(parsers).map(([oid, parse]) => {
      const probe = '2001-02-03 04:05:06.789+00';
      if (parse(probe, Number(oid)) !== probe)
        throw new Error(`the embedded store runs in a worker thread: the parser for type ${oid} cannot be sent to it`);
      return Number(oid);
    });
    described.set(parsers, oids);
  }
  return oids;
}

/**
 * A parameter as the worker's PGlite would have seen it here. The structured clone keeps primitives, arrays, plain
 * objects, Dates and byte arrays, but drops a class instance's prototype (a Decimal would arrive as `{s, e, d}`),
 * so such a value is sent as the text PGlite would have made of it (`toString`).
 */
function cloneable(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(cloneable);
  if (v instanceof Date || ArrayBuffer.isView(v)) return v;
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) return v;
  return String(v);
}

const params = (ps: unknown[] | undefined) => (ps ? ps.map(cloneable) : []);

/**
 * PGlite seen from the main thread: every statement is a message to the worker thread that runs it
 * (pglite-worker.ts), so SQL never runs on the event loop. Transactions stay exclusive: BEGIN opens PGlite's
 * transaction in the worker and the statements of `fn` run on it while other statements wait there.
 * A worker that dies fails every waiting and later call at once (never a hang).
 */
export class RemotePglite implements RemoteClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private dead: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (msg: Response) => {
      const call = this.pending.get(msg.id);
      if (!call) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if ('ok' in msg) {
        if (msg.ok) call.resolve(msg.value);
        else call.reject(toError(msg.error));
      }
    });
    worker.on('error', (err) => this.die(`failed: ${err.message}`));
    worker.on('exit', (code) => this.die(`exited (code ${code})`));
  }

  /** Starts the worker and opens PGlite in it; rejects with PGlite's own error when it cannot open. */
  static async start(init: WorkerStart): Promise<RemotePglite> {
    // The process's first open does not wait for a compile here: its worker compiles and hands the module back.
    // Compiled on this thread, the worker of a `serve` started 1.5 s late (load 12): the compile's continuation
    // waited behind the loading of the engine and HTTP code, which runs meanwhile (main.ts).
    const first = wasm === undefined;
    let share: (m: WebAssembly.Module | undefined) => void = () => undefined;
    if (first)
      wasm = new Promise((resolve) => {
        share = resolve;
      });
    const wasmModule = first ? undefined : await wasm;
    const worker = newWorker({ ...init, ...(wasmModule ? { wasmModule } : {}) });
    const ready = new Promise<void>((resolve, reject) => {
      const onExit = (code: number) =>
        reject(new Error(`the embedded store's worker thread exited at start (code ${code})`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (msg: Response) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if ('ready' in msg && msg.ready) {
          if (msg.wasmModule) wasm = Promise.resolve(msg.wasmModule);
          share(msg.wasmModule);
          resolve();
        } else
          reject('error' in msg ? toError(msg.error) : new Error('the embedded store worker sent no ready message'));
      });
    });
    try {
      await ready;
    } catch (err) {
      // The next open compiles again; opens waiting for this one's module load PGlite's own.
      if (first) wasm = undefined;
      share(undefined);
      await worker.terminate();
      throw err;
    }
    // Idle, the worker does not keep the process alive (as PGlite on the main thread did not); a call refs it.
    worker.unref();
    return new RemotePglite(worker);
  }

  private die(how: string): void {
    if (this.dead) return;
    this.dead = new Error(`the embedded store's worker thread ${how}; the store is closed`);
    for (const call of this.pending.values()) call.reject(this.dead);
    this.pending.clear();
  }

  private call(req: RequestBody): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ ...req, id });
    });
  }

  query(sql: string, ps?: unknown[], options?: QueryOptions, tx?: number): Promise<RemoteResults> {
    // drizzle's driver passes no statement name: a text the store ran through executeNamed carries it here.
    const name = namedAs(sql);
    return this.call({
      op: 'query',
      sql,
      params: params(ps),
      ...(options?.rowMode ? { rowMode: options.rowMode } : {}),
      ...optionalOids(options),
      ...(tx === undefined ? {} : { tx }),
      ...(name === undefined ? {} : { name }),
    }) as Promise<RemoteResults>;
  }

  exec(sql: string, options?: QueryOptions, tx?: number): Promise<RemoteResults[]> {
    return this.call({ op: 'exec', sql, ...optionalOids(options), ...(tx === undefined ? {} : { tx }) }) as Promise<
      RemoteResults[]
    >;
  }

  /** PGlite's `transaction`: commits when `fn` resolves, rolls back when it throws (or called `rollback`). */
  async transaction<T>(fn: (tx: RemoteTransaction) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: 'begin' })) as number;
    let closed = false;
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx: RemoteTransaction = {
      query: async (sql, ps, options) => {
        open();
        return this.query(sql, ps, options, id);
      },
      exec: async (sql, options) => {
        open();
        return this.exec(sql, options, id);
      },
      rollback: async () => {
        open();
        closed = true;
        await this.call({ op: 'end', tx: id, commit: false });
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      if (!closed) {
        closed = true;
        // The caller's error is the one to report; a dead worker has rolled back with its process memory.
        await this.call({ op: 'end', tx: id, commit: false }).catch(() => undefined);
      }
      throw err;
    }
    if (!closed) {
      closed = true;
      await this.call({ op: 'end', tx: id, commit: true });
    }
    return result;
  }

  /** How many host flushes (fdatasync/fsync) the worker's PGlite has made: tests see a commit reach the disk. */
  hostFlushes(): Promise<number> {
    return this.call({ op: 'flushes' }) as Promise<number>;
  }

  /** Closes PGlite (its last checkpoint) and ends the thread; resolves at once when the worker already died. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (!this.dead) await this.call({ op: 'close' });
      } finally {
        this.dead ??= new Error('the embedded store is closed');
        await this.worker.terminate();
        // Calls posted behind the close that the thread had not answered when it ended: refused, not left
        // waiting for ever (a shutdown step awaiting one of them hung; seen in CI).
        for (const call of this.pending.values()) call.reject(this.dead);
        this.pending.clear();
      }
    })();
    return this.closing;
  }
}

/**
 * PGlite's WebAssembly compiled once per process, by the first open's worker (pglite-worker.ts), and handed to
 * each later worker: a worker would otherwise compile it again at every open, seconds on a loaded machine (tests
 * and restarts open a store many times). Undefined: nothing compiled yet; resolves to undefined when the first
 * worker could not compile it (then each worker loads PGlite's own).
 */
let wasm: Promise<WebAssembly.Module | undefined> | undefined;

const optionalOids = (options: QueryOptions | undefined) => {
  const oids = rawOids(options);
  return oids ? { rawOids: oids } : {};
};

/**
 * The worker's V8 young generation, in MB. Left to V8 it grew to 32 MB (two 16 MB semi-spaces) while holding 2-6 MB
 * of live objects at 10,000 accounts: the thread's objects live for one statement (result rows on their way to the
 * main thread). Bounded, more of them reach the old generation (15-22 -> 23-36 MB), but the worker's heap is still
 * smaller: 32-45 MB against 49-56 MB in five alternating runs of `npm run bench scale-10k` (docs/performance.md).
 * Not the old generation: a bound there would end the thread, and the store, on one large result.
 */
const resourceLimits = { maxYoungGenerationSizeMb: 8 };

/**
 * The worker's module beside this one: compiled JavaScript in dist; under vitest or tsx it is TypeScript, loaded
 * through tsx's loader, registered inside the worker (a worker does not inherit the parent's loader).
 */
function newWorker(init: WorkerStart): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: init, resourceLimits });
  // tsx's ESM entry (its `import` export), found through the CommonJS one `require.resolve` returns.
  const tsxCjs = createRequire(import.meta.url).resolve('tsx/esm/api');
  const tsx = pathToFileURL(tsxCjs.replace(/\.cjs$/, '.mjs')).href;
  const file = new URL('./pglite-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(file)}); })`;
  return new Worker(boot, { eval: true, workerData: init, resourceLimits });
}
