// The service of the scale benchmark, in a child process that also watches its own event loop: the parent asks
// over IPC for the longest stall since its last reset (perf_hooks.monitorEventLoopDelay, 10 ms resolution), and the
// collector's pauses over the same stretch: a stall that is one of them is the heap's size, not a piece of our code.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/main.js';

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// Each pause's length and kind (the `detail.kind` flags of a gc entry: 1 minor, 2 major, 4 incremental, 8 weak callbacks).
let pauses: Array<{ ms: number; kind: number }> = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    pauses.push({ ms: e.duration, kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0 });
}).observe({ entryTypes: ['gc'] });
const [dataDir, port] = process.argv.slice(2);
const svc = await startService(loadConfig({ dataDir: dataDir!, port: port! }), false);
process.on('message', (m: unknown) => {
  if (m === 'reset') {
    loop.reset();
    pauses = [];
  }
  if (m === 'read') {
    const longest = pauses.reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, kind: 0 });
    process.send!({
      maxMs: loop.max / 1e6,
      p99Ms: loop.percentile(99) / 1e6,
      meanMs: loop.mean / 1e6,
      gcMaxMs: longest.ms,
      gcMaxKind: longest.kind,
      gcSumMs: pauses.reduce((a, b) => a + b.ms, 0),
      gcCount: pauses.length,
    });
  }
  if (m === 'stop') void svc.close().then(() => process.exit(0));
});
process.send!('started');
