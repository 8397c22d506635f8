import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { SimBroker } from './broker.js';

export interface SimPersistenceOptions {
  /** Journal size past which the next write folds it into a new snapshot. */
  compactBytes?: number;
  /** fdatasync every journal append (default). Off only for throwaway state, e.g. benchmarks of the rest. */
  sync?: boolean;
  /**
   * Finished orders and deals kept per account when the journal is folded (default 2,000): the snapshot, and the
   * broker's memory, stop growing with every trade ever made. Between two folds the history grows by at most
   * what fits in `compactBytes` of journal.
   */
  historyBound?: number;
}

type Snapshot = { books: Array<Record<string, unknown>> } & Record<string, unknown>;
type Lengths = { history: number; deals: number };

/**
 * Keeps the simulated broker's state on disk so that nothing it answered as done is lost with its process:
 * a snapshot (`simulator.json`, written atomically) plus an append-only journal (`simulator.json.journal`) to
 * which every write appends the accounts it changed, fdatasync'ed before the write returns, so before any
 * front end answers. A journal line carries an account's whole open state and only the history and deals
 * added since its previous line, so a write costs one small append, not a rewrite of all history.
 */
export class SimPersistence {
  readonly journalFile: string;
  private fd: number | null = null;
  private journalBytes = 0;
  private readonly written = new Map<string, Lengths>();
  private unsubscribe: (() => void) | null = null;
  private readonly compactBytes: number;
  private readonly sync: boolean;
  private readonly historyBound: number;

  constructor(
    private readonly file: string,
    opts: SimPersistenceOptions = {},
  ) {
    this.journalFile = `${file}.journal`;
    this.compactBytes = opts.compactBytes ?? 8 * 1024 * 1024;
    this.sync = opts.sync ?? true;
    this.historyBound = opts.historyBound ?? 2000;
  }

  /** The snapshot with the journal applied, or undefined when there is no state yet. */
  load(): unknown {
    const base = this.readSnapshot();
    const lines = existsSync(this.journalFile) ? readFileSync(this.journalFile, 'utf8').split('\n') : [];
    if (base === undefined) {
      // attach() writes a snapshot before the first journal line, so a journal alone is not ours to guess about.
      if (lines.some((l) => l.trim() !== ''))
        throw new Error(
          `simulator journal ${this.journalFile} has no snapshot ${this.file}; move it away to start afresh`,
        );
      return undefined;
    }
    const snap = base;
    // Book positions by account id: a line finds its book at once instead of scanning every account.
    const at = new Map(snap.books.map((b, i) => [(b.account as { id: string }).id, i]));
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue;
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        // Only the last line can be torn (killed mid-append); its write never returned, so nobody was told it happened.
        if (lines.slice(i + 1).every((l) => l.trim() === '')) break;
        throw new Error(
          `simulator journal ${this.journalFile} is corrupt at line ${i + 1}; move it away to start the simulator afresh`,
        );
      }
      applyRecord(snap, rec, at);
    }
    return snap;
  }

  /** Journals every write of `broker` from now on; `broker` must have been built from load()'s result. */
  attach(broker: SimBroker): void {
    // Start from a fresh snapshot, so the journal only ever holds lines relative to what is on disk. With a
    // snapshot and an empty journal (the last stop folded it) what is on disk is the state already: rewriting
    // it would be per-account work on every start, so the journal is only opened.
    if (existsSync(this.file) && this.journalSize() === 0) this.resume(broker);
    else this.compact(broker);
    this.unsubscribe = broker.onCommit((ids) => this.append(broker, ids));
  }

  private resume(broker: SimBroker): void {
    this.fd = openSync(this.journalFile, 'a', 0o600);
    this.journalBytes = 0;
    this.written.clear();
    for (const acc of broker.accounts()) this.written.set(acc.id, broker.journalLengths(acc.id));
  }

  detach(broker: SimBroker): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.compact(broker);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private append(broker: SimBroker, ids: string[]): void {
    if (this.journalBytes >= this.compactBytes) {
      this.compact(broker);
      return;
    }
    let out = '';
    for (const id of ids) {
      const { record, lengths } = broker.journalRecord(id, this.written.get(id) ?? { history: 0, deals: 0 });
      out += `${JSON.stringify(record)}\n`;
      this.written.set(id, lengths);
    }
    const buf = Buffer.from(out);
    writeAll(this.fd!, buf);
    if (this.sync) fdatasyncSync(this.fd!);
    this.journalBytes += buf.length;
  }

  /** Whole state to the snapshot (write, fsync, rename, fsync the folder), then an empty journal. */
  private compact(broker: SimBroker): void {
    broker.trimHistory(this.historyBound);
    const tmp = `${this.file}.tmp`;
    // On PostgreSQL nothing else creates the data dir (the embedded store does, when it is the store).
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeAll(fd, Buffer.from(JSON.stringify(broker.snapshot())));
      if (this.sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    if (this.sync) syncDir(dirname(this.file));
    // The old journal is folded into the snapshot now; truncating it cannot lose anything.
    if (this.fd !== null) closeSync(this.fd);
    this.fd = openSync(this.journalFile, 'w', 0o600);
    if (this.sync) fsyncSync(this.fd);
    this.journalBytes = 0;
    this.written.clear();
    for (const acc of broker.accounts()) this.written.set(acc.id, broker.journalLengths(acc.id));
  }

  private readSnapshot(): Snapshot | undefined {
    if (!existsSync(this.file)) return undefined;
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Snapshot;
    } catch (err) {
      throw new Error(
        `simulator state ${this.file} is unreadable (${(err as Error).message}); move it away to start the simulator afresh`,
      );
    }
  }

  /** Bytes in the journal now (tests and the cost figures in the docs). */
  journalSize(): number {
    return existsSync(this.journalFile) ? statSync(this.journalFile).size : 0;
  }
}

function applyRecord(snap: Snapshot, rec: Record<string, unknown>, at: Map<string, number>): void {
  snap.seq = Math.max(Number(snap.seq ?? 0), Number(rec.seq ?? 0));
  snap.accountSeq = Math.max(Number(snap.accountSeq ?? 0), Number(rec.accountSeq ?? 0));
  const account = rec.account as { id: string };
  const i = at.get(account.id) ?? -1;
  const prev = i >= 0 ? snap.books[i]! : { history: [], deals: [] };
  const book = {
    account,
    positions: rec.positions,
    pending: rec.pending,
    history: (prev.history as unknown[]).slice(0, Number(rec.historyFrom)).concat(rec.history as unknown[]),
    deals: (prev.deals as unknown[]).slice(0, Number(rec.dealsFrom)).concat(rec.deals as unknown[]),
  };
  if (i >= 0) snap.books[i] = book;
  else at.set(account.id, snap.books.push(book) - 1);
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is then as durable as they make it.
  }
}
