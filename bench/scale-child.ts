// The service of the scale benchmark, in a child process that also watches its own event loop: the parent asks
// over IPC for the longest stall since its last reset (perf_hooks.monitorEventLoopDelay, 10 ms resolution).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/main.js';

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const [dataDir, port] = process.argv.slice(2);
const svc = await startService(loadConfig({ dataDir: dataDir!, port: port! }), false);
process.on('message', (m: unknown) => {
  if (m === 'reset') loop.reset();
  if (m === 'read') process.send!({ maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, meanMs: loop.mean / 1e6 });
  if (m === 'stop') void svc.close().then(() => process.exit(0));
});
process.send!('started');
