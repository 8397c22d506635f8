// `npm run bench`: benchmarks, not tests. Each prints a table and writes JSON under bench/results/.
import { benchCrossPlatformLatency, benchCrossPlatformScaleB, benchCrossPlatformScaleC } from './cross-platform.js';
import { benchService } from './service.js';
import { benchCopyOverhead } from './copy-overhead.js';
import { benchRecordCost } from './record-cost.js';
import { benchRateLimitCost } from './rate-limit-cost.js';
import { benchScale } from './scale.js';
import { benchE2e } from './e2e.js';
import { benchSoak } from './soak.js';
import { drawCharts } from './charts.js';
import { benchStart } from './start.js';
import { benchScaleOut } from './scale-out.js';
import { benchScaleOut10k } from './scale-out-10k.js';
import { benchBridge } from './bridge.js';
import { benchWhatIf } from './what-if.js';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  service: benchService,
  'copy-overhead': benchCopyOverhead,
  'record-cost': benchRecordCost,
  'rate-limit-cost': benchRateLimitCost,
  'cross-platform-latency': benchCrossPlatformLatency,
  'cross-platform-500c': () => benchCrossPlatformScaleC(500),
  'cross-platform-1000c': () => benchCrossPlatformScaleC(1000),
  'cross-platform-500b': benchCrossPlatformScaleB,
  'scale-10k': benchScale,
  e2e: benchE2e,
  soak: benchSoak,
  start: benchStart,
  'scale-out': benchScaleOut,
  'scale-out-10k': benchScaleOut10k,
  bridge: benchBridge,
  'what-if': benchWhatIf,
};
/** Only when named: the soak takes 30 minutes, 10,000 accounts over two workers several. */
const onlyNamed = new Set(['soak', 'scale-out-10k']);
const ran = new Set<string>();
for (const [name, fn] of Object.entries(benches)) {
  if (only ? only !== name : onlyNamed.has(name)) continue;
  await fn();
  ran.add(name);
}
// Charts of the benches this run ran; the others' stay as their documented runs drew them.
drawCharts(ran);
