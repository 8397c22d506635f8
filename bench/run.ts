// `npm run bench`: benchmarks, not tests. Each prints a table and writes JSON under bench/results/.
import { benchCrossPlatformLatency, benchCrossPlatformScaleB, benchCrossPlatformScaleC } from './cross-platform.js';
import { benchService } from './service.js';
import { benchCopyOverhead } from './copy-overhead.js';
import { benchRateLimitCost } from './rate-limit-cost.js';
import { benchScale } from './scale.js';
import { benchScaleOut } from './scale-out.js';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  service: benchService,
  'copy-overhead': benchCopyOverhead,
  'rate-limit-cost': benchRateLimitCost,
  'cross-platform-latency': benchCrossPlatformLatency,
  'cross-platform-500c': benchCrossPlatformScaleC,
  'cross-platform-500b': benchCrossPlatformScaleB,
  'scale-10k': benchScale,
  'scale-out': benchScaleOut,
};
for (const [name, fn] of Object.entries(benches)) {
  if (only && only !== name) continue;
  await fn();
}
