import { fdatasyncSync, fsyncSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * PGlite's Node file system (emscripten's NODEFS, files of the host's data dir), with PostgreSQL's fsync reaching
 * the host. As shipped (PGlite 0.5), neither does: emscripten's `fdatasync` (PostgreSQL's default `wal_sync_method`
 * on Linux) returns 0 without a call, and its `fsync` asks the stream's `fsync` operation, which NODEFS lacks. A store
 * opened with fsync on, 50 commits: 0 fsync and 0 fdatasync calls under strace. So a commit's WAL sat in the
 * host's page cache when PostgreSQL answered it, and a power cut could take intents whose orders had gone out.
 *
 * Here NODEFS's streams get that `fsync`: an fdatasync of the host file (a directory: fsync). PostgreSQL must then
 * sync its WAL with `fsync()` (`wal_sync_method=fsync`, pgliteParams in db.ts), the one call that reaches it; its
 * data files, control file and directories already go through `fsync()`. A host error comes back to PostgreSQL
 * as its errno (EIO...), and PostgreSQL treats a failed fsync as it always does (a PANIC, data_sync_retry=off).
 */

/** Host flushes, counted per process: the test reads them to see a commit flush (test/store). */
export const hostFlushes = { count: 0 };

interface NodefsModule {
  FS: { isDir(mode: number): boolean };
  NODEFS: {
    stream_ops: Record<string, unknown>;
    tryFSOperation<T>(fn: () => T): T;
  };
}

interface NodefsStream {
  nfd: number;
  node: { mode: number };
}

/** Installs the flush on NODEFS's stream operations (one object, shared by every NODEFS file). */
export function addHostFlush(mod: NodefsModule, flush: (fd: number, dir: boolean) => void = hostFlush): void {
  mod.NODEFS.stream_ops.fsync = (stream: NodefsStream) => {
    // tryFSOperation turns a Node error into the emscripten errno PostgreSQL's fsync() returns.
    mod.NODEFS.tryFSOperation(() => flush(stream.nfd, mod.FS.isDir(stream.node.mode)));
    return 0;
  };
}

function hostFlush(fd: number, dir: boolean): void {
  // fdatasync, as PostgreSQL does for its WAL on Linux: the data and what reading it back needs (size, blocks),
  // not the timestamps. A directory (a file created, renamed or removed in it) gets fsync.
  if (dir) fsyncSync(fd);
  else fdatasyncSync(fd);
  hostFlushes.count++;
}

export class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts);
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...(emscriptenOpts.preRun ?? []), (mod: unknown) => addHostFlush(mod as NodefsModule)],
      },
    };
  }
}
