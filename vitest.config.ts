import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/sequencer.js';

const nodeMajor = Number(process.versions.node.split('.')[0]);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    // A whole demo service starts in some hooks: past 60 s seen at load 26 on a shared CI machine.
    hookTimeout: 120_000,
    pool: 'forks',
    // Two test files at a time even on 2 cores (vitest's default there is one): the files mostly wait (on started
    // services, child processes, PostgreSQL, timers) and used about a third of a core each. Eight of the slowest
    // files took 100-119 s one at a time and 72 s two at a time (three: 70 s, with each file slower), at a load of
    // 13-17 from other work on the 2-core VM (2026-12-07).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A test process runs file after file without importing everything anew for each: the service's modules (fastify,
    // PGlite, drizzle, the adapters) took seconds to import per file, half of the suite's CPU time. test/api (33
    // files): 280 s and 172 s of CPU isolated, 176 s and 83 s not (two workers, load 12-13, 2026-12-07). A file
    // must leave the process as it found it: it closes what it starts, restores its spies and real timers, and
    // removes the process listeners it adds.
    // On Node 22 and later each file keeps a process of its own: a test process of a Node 24 run that had run six
    // files died in V8 ("Check failed: jit_page_->allocations_.erase(addr) == 1" in
    // ThreadIsolation::UnregisterWasmAllocation, a PGlite worker thread freeing its WebAssembly), which Node 20's V8
    // does not have; a process that runs one file frees far less WebAssembly before it exits.
    isolate: nodeMajor >= 22,
    sequence: { sequencer: SlowestFirst },
    // The second names a test file whose process died, which vitest's own output leaves out.
    reporters: ['default', './test/reporters/unfinished-files.ts', './test/reporters/file-times.ts'],
    globalSetup: ['test/browser/global-setup.ts'],
  },
});
