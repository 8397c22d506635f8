import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import { DurableNodeFS, hostFlushes } from './pglite-durable-fs.js';
import { PgliteNamedStatements } from './pglite-named.js';
import type { ErrorData, Request, Response, WorkerStart } from './pglite-protocol.js';

/**
 * The embedded store's worker thread: PGlite (PostgreSQL in WebAssembly) runs here, so its CPU work (parsing,
 * planning, executing, writing pages, parsing results) never holds the main thread's event loop, where copies are
 * sent and fills read. The main thread talks to it through pglite-remote.ts. A statement outside a transaction
 * waits for any open transaction, as PGlite orders them; a transaction's statements run on its own handle.
 */

const port = parentPort;
if (!port) throw new Error('pglite-worker.ts runs as a worker thread (see pglite-remote.ts)');
const start = workerData as WorkerStart;

/** Plain data of an error: the fields PostgreSQL sets (code, constraint, detail...) survive the thread hop. */
function errorData(err: unknown): ErrorData {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (v === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof v)) fields[k] = v;
  }
  return { name: err.name, message: err.message, fields };
}

const keepText = (value: string) => value;
/** Parser sets by their type ids: drizzle asks for the same few sets on every query. */
const parserSets = new Map<string, Record<number, (v: string) => string>>();
function parsers(oids: number[] | undefined) {
  if (!oids) return undefined;
  const key = oids.join(',');
  let set = parserSets.get(key);
  if (!set) {
    set = Object.fromEntries(oids.map((o) => [o, keepText]));
    parserSets.set(key, set);
  }
  return set;
}

/** A transaction ended with rollback, by request: not an error to report. */
const ROLLBACK = Symbol('rollback');

interface OpenTx {
  handle: Transaction | null;
  end(commit: boolean): void;
  done: Promise<void>;
}

const txs = new Map<number, OpenTx>();
let nextTx = 1;

/** A result without its blob: rows, fields and counts are plain data. */
const plain = (r: Results<unknown>) => ({
  rows: r.rows,
  fields: r.fields,
  affectedRows: r.affectedRows,
  command: r.command,
  rowCount: r.rowCount,
});

const reply = (msg: Response) => port.postMessage(msg);

/** The statements this worker's PGlite has prepared by name (one session: one set). */
let named: PgliteNamedStatements | null = null;

async function run(pg: PGlite, req: Request): Promise<unknown> {
  switch (req.op) {
    case 'query': {
      // handleOf also refuses a statement for a transaction that is not open, named or not.
      const on = req.tx === undefined ? pg : handleOf(req.tx);
      const p = parsers(req.rawOids);
      const options = { ...(req.rowMode ? { rowMode: req.rowMode } : {}), ...(p ? { parsers: p } : {}) };
      if (req.name !== undefined) {
        named ??= new PgliteNamedStatements(pg);
        return plain(await named.run(req.name, req.sql, req.params, options, req.tx !== undefined));
      }
      return plain(await on.query(req.sql, req.params, options));
    }
    case 'exec': {
      const on = req.tx === undefined ? pg : handleOf(req.tx);
      const p = parsers(req.rawOids);
      const rs = await on.exec(req.sql, p ? { parsers: p } : undefined);
      return rs.map(plain);
    }
    case 'begin':
      return begin(pg);
    case 'end': {
      const tx = txs.get(req.tx);
      if (!tx) throw new Error(`no open transaction ${req.tx}`);
      tx.end(req.commit);
      await tx.done;
      return null;
    }
    case 'close':
      await pg.close();
      return null;
    case 'flushes':
      return hostFlushes.count;
  }
}

function handleOf(id: number): Transaction {
  const h = txs.get(id)?.handle;
  if (!h) throw new Error(`no open transaction ${id}`);
  return h;
}

/**
 * Opens a PGlite transaction and holds it until the main thread ends it: answers with its id once BEGIN ran.
 * PGlite commits when the callback returns and rolls back when it throws, as it does on the main thread.
 */
function begin(pg: PGlite): Promise<number> {
  const id = nextTx++;
  return new Promise<number>((resolveBegin, rejectBegin) => {
    let end: (commit: boolean) => void = () => undefined;
    const ended = new Promise<boolean>((r) => {
      end = r;
    });
    const tx: OpenTx = { handle: null, end, done: Promise.resolve() };
    txs.set(id, tx);
    let begun = false;
    tx.done = pg
      .transaction(async (handle) => {
        tx.handle = handle;
        begun = true;
        resolveBegin(id);
        if (!(await ended)) throw ROLLBACK;
      })
      .then(
        () => undefined,
        (err: unknown) => {
          if (err === ROLLBACK) return;
          if (!begun) rejectBegin(err);
          throw err;
        },
      )
      .finally(() => txs.delete(id));
    // A BEGIN that failed is reported to the begin request; the end request never comes then.
    tx.done.catch(() => undefined);
  });
}

/** PGlite's WebAssembly: the one the process compiled already, else compiled here (and handed back when ready). */
async function wasmModule(): Promise<WebAssembly.Module | undefined> {
  if (start.wasmModule) return start.wasmModule;
  try {
    const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    return await WebAssembly.compile(await readFile(join(dist, 'pglite.wasm')));
  } catch {
    // Not where expected: PGlite loads its own.
    return undefined;
  }
}

try {
  const wasm = await wasmModule();
  const pg = await PGlite.create({
    ...(start.dataDir ? (start.hostFlush ? { fs: new DurableNodeFS(start.dataDir) } : { dataDir: start.dataDir }) : {}),
    ...(start.loadTarball ? { loadDataDir: new Blob([await readFile(start.loadTarball)]) } : {}),
    ...(wasm ? { pgliteWasmModule: wasm } : {}),
    startParams: start.startParams,
  });
  port.on('message', (req: Request) => {
    run(pg, req).then(
      (value) => reply({ id: req.id, ok: true, value }),
      (err: unknown) => reply({ id: req.id, ok: false, error: errorData(err) }),
    );
  });
  reply({ id: 0, ready: true, ...(wasm && !start.wasmModule ? { wasmModule: wasm } : {}) });
} catch (err) {
  reply({ id: 0, ready: false, error: errorData(err) });
}
