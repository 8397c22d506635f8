// Issue 12: the soak. 100 Slaves (50 on platform B, 50 on C, each C on its own connection) behind one Master on
// platform C, through the whole service (bench/pipeline.ts); an action every 2 s at the simulated broker, an
// open then its close. Per minute: copy latency (Master fill -> Slave fill, every Slave), the service's RSS,
// event-loop delay and CPU, and the simulator's share of the CPU (this process is the simulator). Flat means
// the last five minutes' open p50 within 20 % of the first five's.
import type { Side } from '../src/domain/types.js';
import { percentile, report } from './lib.js';
import { startPipeline } from './pipeline.js';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const SLAVES_B = 50;
const SLAVES_C = 50;
const EVERY_MS = 2000;
/** A copy later than this counts as missing (it is far past any latency goal). */
const LIMIT_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const r1 = (v: number) => Math.round(v * 10) / 10;

export interface SoakMinute {
  minute: number;
  actions: number;
  openP50Ms: number;
  openP99Ms: number;
  closeP50Ms: number;
  closeP99Ms: number;
  missing: number;
  rssMb: number;
  loopP99Ms: number;
  loopMaxMs: number;
  serviceCpuPct: number;
  simulatorCpuShare: number;
}

const pct = (xs: number[], p: number) =>
  xs.length
    ? percentile(
        [...xs].sort((a, b) => a - b),
        p,
      )
    : Number.NaN;

export async function benchSoak(): Promise<void> {
  const p = await startPipeline({ b: SLAVES_B, c: SLAVES_C, seed: 30 });
  const n = p.slaves.length;
  try {
    // Untimed: the first copy signs every Slave in and loads its instruments.
    for (const kind of ['open', 'close'] as const) {
      const t = await p.act(kind === 'open' ? { kind, side: 'buy' } : { kind }, 120_000);
      if (t.size < n) throw new Error(`warm-up ${kind}: ${n - t.size} of ${n} Slaves not copied within 120 s`);
    }
    await p.sample();
    const minutes: SoakMinute[] = [];
    const all: { open: number[][]; first: number } = { open: [], first: 0 };
    const t0 = performance.now();
    let simCpu = process.cpuUsage();
    let opens: number[] = [];
    let closes: number[] = [];
    let missing = 0;
    let actions = 0;
    let minuteStart = performance.now();
    for (let k = 0; performance.now() - t0 < MINUTES * 60_000; k++) {
      const due = t0 + k * EVERY_MS;
      if (due > performance.now()) await sleep(due - performance.now());
      const open = k % 2 === 0;
      const side: Side = k % 4 === 0 ? 'buy' : 'sell';
      const times = await p.act(open ? { kind: 'open', side } : { kind: 'close' }, LIMIT_MS);
      (open ? opens : closes).push(...times.values());
      missing += n - times.size;
      actions++;
      if (performance.now() - minuteStart >= 60_000) {
        const s = await p.sample();
        const c = process.cpuUsage(simCpu);
        const simMs = (c.user + c.system) / 1000;
        const wall = performance.now() - minuteStart;
        minutes.push({
          minute: minutes.length + 1,
          actions,
          openP50Ms: r1(pct(opens, 50)),
          openP99Ms: r1(pct(opens, 99)),
          closeP50Ms: r1(pct(closes, 50)),
          closeP99Ms: r1(pct(closes, 99)),
          missing,
          rssMb: Math.round(s.rssMb),
          loopP99Ms: r1(s.loopP99Ms),
          loopMaxMs: r1(s.loopMaxMs),
          serviceCpuPct: r1((s.cpuMs / wall) * 100),
          simulatorCpuShare: r1((simMs / (simMs + s.cpuMs)) * 100),
        });
        console.log(JSON.stringify(minutes.at(-1)));
        all.open.push(opens);
        simCpu = process.cpuUsage();
        minuteStart = performance.now();
        opens = [];
        closes = [];
        missing = 0;
        actions = 0;
      }
    }
    // Flatness over whole five-minute windows (shorter runs: half the run each).
    const w = Math.max(1, Math.min(5, Math.floor(minutes.length / 2)));
    const first = pct(all.open.slice(0, w).flat(), 50);
    const last = pct(all.open.slice(-w).flat(), 50);
    const ratio = last / first;
    const rss = minutes.map((m) => m.rssMb);
    report(
      'soak',
      [
        ...minutes.map((m) => ({ ...m }) as unknown as Record<string, number>),
        {
          minute: Number.NaN,
          actions: minutes.reduce((a, m) => a + m.actions, 0),
          openP50Ms: r1(first),
          openP99Ms: r1(last),
          closeP50Ms: r1(ratio * 100),
          closeP99Ms: Number.NaN,
          missing: minutes.reduce((a, m) => a + m.missing, 0),
          rssMb: Math.max(...rss) - Math.min(...rss),
          loopP99Ms: Number.NaN,
          loopMaxMs: Math.max(...minutes.map((m) => m.loopMaxMs)),
          serviceCpuPct: Number.NaN,
          simulatorCpuShare: Number.NaN,
        },
      ],
      {
        minutes: MINUTES,
        slaves: { B: SLAVES_B, C: SLAVES_C },
        everyMs: EVERY_MS,
        windowMinutes: w,
        firstOpenP50Ms: r1(first),
        lastOpenP50Ms: r1(last),
        lastOverFirst: Number(ratio.toFixed(3)),
        flat: Math.abs(ratio - 1) <= 0.2,
        perMinute: minutes,
        note: 'last row: minute NaN = summary (openP50Ms first window, openP99Ms last window, closeP50Ms last/first %, rssMb max-min)',
      },
    );
    console.log(
      `soak: open p50 first ${w} min ${r1(first)} ms, last ${w} min ${r1(last)} ms = ${(ratio * 100).toFixed(0)} % (flat: within 20 %)`,
    );
  } finally {
    await p.close();
  }
}
