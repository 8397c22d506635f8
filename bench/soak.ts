// Issue 12: the soak. 100 Slaves (50 on platform B, 50 on C, the C ones pooled over four connections of 12-13) behind
// one Master on platform C, through the whole service (bench/pipeline.ts); an action every 2 s at the simulated broker,
// an open then its close. On this shared machine absolute latency follows the machine's load, not the service's age, so
// every action also drives an in-run baseline: one platform B and one platform C account of the same simulator, unknown
// to the service, are filled at the Master's fill straight through their adapters (a Dispatcher and nothing else, as
// e2e's floor), timed the same way (Master fill -> the account's fill event). Flatness is judged on the service's open
// p50 over the baseline's, first five minutes against the last five; the raw figures are kept beside it. Per minute
// also: the machine's load, the service's RSS, event-loop delay and CPU, the simulator's share of the CPU, and what
// grows with age (ledger rows, the simulator's history).
import { loadavg } from 'node:os';
import { Decimal } from '../src/domain/decimal.js';
import type { Side } from '../src/domain/types.js';
import { Dispatcher } from '../src/engine/dispatcher.js';
import type { BrokerAdapter } from '../src/platforms/adapter.js';
import { createCTraderAdapterFactory } from '../src/platforms/ctrader/factory.js';
import { discoverTradeLockerAccounts } from '../src/platforms/tradelocker/connect.js';
import { createTradeLockerAdapterFactory } from '../src/platforms/tradelocker/factory.js';
import type { ChildSample } from './pipeline-child.js';
import { serviceRuntime } from './deploy-runtime.js';
import { percentile, report } from './lib.js';
import { SYMBOL, startPipeline, type Pipeline } from './pipeline.js';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const SLAVES_B = 50;
const SLAVES_C = 50;
const EVERY_MS = 2000;
/** A copy later than this counts as missing (it is far past any latency goal). */
const LIMIT_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const r1 = (v: number) => Math.round(v * 10) / 10;
const r3 = (v: number) => Math.round(v * 1000) / 1000;

export interface SoakMinute {
  minute: number;
  actions: number;
  openP50Ms: number;
  openP99Ms: number;
  closeP50Ms: number;
  closeP99Ms: number;
  /** The same p99s per platform of the Slaves: which one sets the tail. */
  openP99BMs: number;
  openP99CMs: number;
  closeP99BMs: number;
  closeP99CMs: number;
  missing: number;
  /** The baseline (one B, one C account driven directly), the same minute. */
  baseOpenP50Ms: number;
  baseOpenP99Ms: number;
  baseCloseP50Ms: number;
  baseMissing: number;
  /** Service open p50 / baseline open p50, and their difference (ms). */
  openOverBase: number;
  openMinusBaseMs: number;
  /** The machine's 1-minute load average, the mean of its readings at each action of the minute. */
  load1: number;
  rssMb: number;
  loopP99Ms: number;
  loopMaxMs: number;
  serviceCpuPct: number;
  simulatorCpuShare: number;
  /** What grows with age: the service's ledger rows and the simulator's finished orders plus deals. */
  copyIntents: number;
  trades: number;
  events: number;
  positionLinks: number;
  requestRecords: number;
  simHistory: number;
}

const pct = (xs: number[], p: number) =>
  xs.length
    ? percentile(
        [...xs].sort((a, b) => a - b),
        p,
      )
    : Number.NaN;

/** One B and one C account of the same simulator, unknown to the service, and their adapters in this process. */
async function baselineAccounts(p: Pipeline) {
  const metaB = { email: 'baseline-b@bench.test', password: 'pw-base-b', server: 'SIMBROKER', environment: 'demo' };
  const simB = p.broker.createAccount({ balance: 1_000_000, meta: metaB });
  const [a] = await discoverTradeLockerAccounts({ baseUrl: p.tl.baseUrl, ...metaB });
  const simC = p.broker.createAccount({
    balance: 1_000_000,
    meta: { ctidUserId: 'bench-baseline-c', environment: 'demo' },
  });
  const tokens = p.ct.issueTokenFor('bench-baseline-c');
  const ctid = p.ct.ctidTraderAccountIdOf(simC.id);
  const fb = createTradeLockerAdapterFactory({ resolveBaseUrl: () => p.tl.baseUrl, timeoutMs: 15_000 });
  const fc = createCTraderAdapterFactory({
    resolveEndpoint: () => ({ ...p.ct.endpoints.demo, ca: p.ct.ca }),
    clientId: p.ct.clientId,
    clientSecret: p.ct.clientSecret,
    oauthBaseUrl: p.ct.oauthBaseUrl,
    timeoutMs: 15_000,
  });
  const accounts: Array<{ id: string; sim: string; adapter: BrokerAdapter; open: string | null }> = [
    {
      id: 'baseline_b',
      sim: simB.id,
      adapter: await fb.create({
        id: 'baseline_b',
        brokerAccountId: a!.id,
        environment: 'demo',
        credentials: { ...metaB, accNum: String(a!.accNum), accountId: a!.id },
      }),
      open: null,
    },
    {
      id: 'baseline_c',
      sim: simC.id,
      adapter: await fc.create({
        id: 'baseline_c',
        brokerAccountId: ctid,
        environment: 'demo',
        credentials: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, ctidTraderAccountId: ctid },
      }),
      open: null,
    },
  ];
  for (const x of accounts) await x.adapter.instrument(SYMBOL);
  const bySim = new Set(accounts.map((x) => x.sim));
  let waiter: { kind: string; t0: number; times: number[]; seen: Set<string> } | null = null;
  const off = p.broker.onEvent((accountId, ev) => {
    if (!waiter || ev.kind !== waiter.kind || !bySim.has(accountId) || waiter.seen.has(accountId)) return;
    waiter.seen.add(accountId);
    waiter.times.push(performance.now() - waiter.t0);
  });
  const dispatcher = new Dispatcher();
  let n = 0;
  /** Waits for each account's event of `kind` (or the limit) and the adapters' answers; the times from `t0`. */
  const timed = async (kind: string, t0: number, send: () => Promise<unknown>): Promise<number[]> => {
    const w = { kind, t0, times: [] as number[], seen: new Set<string>() };
    waiter = w;
    await send();
    const until = performance.now() + LIMIT_MS;
    while (w.seen.size < accounts.length && performance.now() < until) await sleep(5);
    waiter = null;
    return w.times;
  };
  return {
    sims: accounts.map((x) => x.sim),
    /** Fills both at once, from `t0` (the Master's fill); the times of those seen within the limit. */
    open: (t0: number, side: Side) =>
      timed('position_opened', t0, () =>
        Promise.all(
          accounts.map(async (x) => {
            const o = await dispatcher.place(x.id, x.adapter, {
              symbol: SYMBOL,
              side,
              type: 'market',
              volume: new Decimal('0.1'),
              tag: `baseline-${n++}`,
            });
            x.open = o.kind === 'confirmed' ? o.positionId : null;
          }),
        ),
      ),
    close: (t0: number) =>
      timed('position_closed', t0, () =>
        Promise.all(
          accounts.map(async (x) => {
            if (!x.open) return;
            const id = x.open;
            x.open = null;
            await dispatcher.close(x.id, x.adapter, id);
          }),
        ),
      ),
    stop: async () => {
      off();
      await Promise.all(accounts.map((x) => x.adapter.close().catch(() => undefined)));
      await fc.closeAll();
    },
  };
}

/** The simulator's finished orders and deals over the given accounts (what its tag lookups scan). */
function simHistory(p: Pipeline, sims: string[]): number {
  let n = 0;
  for (const id of sims) {
    const { lengths } = p.broker.journalRecord(id, {
      history: Number.MAX_SAFE_INTEGER,
      deals: Number.MAX_SAFE_INTEGER,
    });
    n += lengths.history + lengths.deals;
  }
  return n;
}

export async function benchSoak(): Promise<void> {
  // Started as deploy/copytrade.service starts it; BENCH_CHILD_ARGS adds node flags (e.g. --cpu-prof --cpu-prof-dir=DIR:
  // where its CPU goes late in a run).
  const { nodeArgs, env } = serviceRuntime();
  const p = await startPipeline({ b: SLAVES_B, c: SLAVES_C, seed: 30, nodeArgs, env });
  const base = await baselineAccounts(p).catch(async (err) => {
    await p.close();
    throw err;
  });
  const n = p.slaves.length;
  const platformOf = new Map(p.slaves.map((s) => [s.sim, s.platform]));
  const sims = [p.masterSim, ...p.slaves.map((s) => s.sim), ...base.sims];
  try {
    // Untimed: the first copy signs every Slave in and loads its instruments.
    for (const kind of ['open', 'close'] as const) {
      const t0 = performance.now();
      const [t] = await Promise.all([
        p.act(kind === 'open' ? { kind, side: 'buy' } : { kind }, 120_000),
        kind === 'open' ? base.open(t0, 'buy') : base.close(t0),
      ]);
      if (t.size < n) throw new Error(`warm-up ${kind}: ${n - t.size} of ${n} Slaves not copied within 120 s`);
    }
    await p.sample();
    const minutes: SoakMinute[] = [];
    const pooled = { open: [] as number[][], base: [] as number[][] };
    const t0 = performance.now();
    let simCpu = process.cpuUsage();
    let opens: number[] = [];
    let closes: number[] = [];
    let tails = { openB: [] as number[], openC: [] as number[], closeB: [] as number[], closeC: [] as number[] };
    let baseOpens: number[] = [];
    let baseCloses: number[] = [];
    let loads: number[] = [];
    let missing = 0;
    let baseMissing = 0;
    let actions = 0;
    let minuteStart = performance.now();
    for (let k = 0; performance.now() - t0 < MINUTES * 60_000; k++) {
      const due = t0 + k * EVERY_MS;
      if (due > performance.now()) await sleep(due - performance.now());
      const open = k % 2 === 0;
      const side: Side = k % 4 === 0 ? 'buy' : 'sell';
      loads.push(loadavg()[0]!);
      // The Master's fill is synchronous inside act(): the baseline's clock starts at the same moment as the service's.
      const copies = p.act(open ? { kind: 'open', side } : { kind: 'close' }, LIMIT_MS);
      const at = performance.now();
      const [times, b] = await Promise.all([copies, open ? base.open(at, side) : base.close(at)]);
      (open ? opens : closes).push(...times.values());
      for (const [sim, ms] of times) {
        const c = platformOf.get(sim) === 'C';
        (open ? (c ? tails.openC : tails.openB) : c ? tails.closeC : tails.closeB).push(ms);
      }
      (open ? baseOpens : baseCloses).push(...b);
      missing += n - times.size;
      baseMissing += 2 - b.length;
      actions++;
      if (performance.now() - minuteStart >= 60_000) {
        const s: ChildSample = await p.sample();
        const c = process.cpuUsage(simCpu);
        const simMs = (c.user + c.system) / 1000;
        const wall = performance.now() - minuteStart;
        const o50 = pct(opens, 50);
        const b50 = pct(baseOpens, 50);
        minutes.push({
          minute: minutes.length + 1,
          actions,
          openP50Ms: r1(o50),
          openP99Ms: r1(pct(opens, 99)),
          closeP50Ms: r1(pct(closes, 50)),
          closeP99Ms: r1(pct(closes, 99)),
          openP99BMs: r1(pct(tails.openB, 99)),
          openP99CMs: r1(pct(tails.openC, 99)),
          closeP99BMs: r1(pct(tails.closeB, 99)),
          closeP99CMs: r1(pct(tails.closeC, 99)),
          missing,
          baseOpenP50Ms: r1(b50),
          baseOpenP99Ms: r1(pct(baseOpens, 99)),
          baseCloseP50Ms: r1(pct(baseCloses, 50)),
          baseMissing,
          openOverBase: r3(o50 / b50),
          openMinusBaseMs: r1(o50 - b50),
          load1: r1(loads.reduce((x, y) => x + y, 0) / loads.length),
          rssMb: Math.round(s.rssMb),
          loopP99Ms: r1(s.loopP99Ms),
          loopMaxMs: r1(s.loopMaxMs),
          serviceCpuPct: r1((s.cpuMs / wall) * 100),
          simulatorCpuShare: r1((simMs / (simMs + s.cpuMs)) * 100),
          copyIntents: s.rows.copyIntents,
          trades: s.rows.trades,
          events: s.rows.events,
          positionLinks: s.rows.positionLinks,
          requestRecords: s.rows.requestRecords,
          simHistory: simHistory(p, sims),
        });
        console.log(JSON.stringify(minutes.at(-1)));
        pooled.open.push(opens);
        pooled.base.push(baseOpens);
        simCpu = process.cpuUsage();
        minuteStart = performance.now();
        opens = [];
        closes = [];
        tails = { openB: [], openC: [], closeB: [], closeC: [] };
        baseOpens = [];
        baseCloses = [];
        loads = [];
        missing = 0;
        baseMissing = 0;
        actions = 0;
      }
    }
    // Whole five-minute windows (shorter runs: half the run each), every open of the window pooled.
    const w = Math.max(1, Math.min(5, Math.floor(minutes.length / 2)));
    const window = (from: number, to: number) => {
      const ms = minutes.slice(from, to);
      const svc = pct(pooled.open.slice(from, to).flat(), 50);
      const bas = pct(pooled.base.slice(from, to).flat(), 50);
      return {
        minutes: `${ms[0]?.minute}-${ms.at(-1)?.minute}`,
        serviceOpenP50Ms: r1(svc),
        baseOpenP50Ms: r1(bas),
        serviceOverBase: r3(svc / bas),
        serviceMinusBaseMs: r1(svc - bas),
        load1: r1(ms.reduce((a, m) => a + m.load1, 0) / ms.length),
        rssMb: `${Math.min(...ms.map((m) => m.rssMb))}-${Math.max(...ms.map((m) => m.rssMb))}`,
        missing: ms.reduce((a, m) => a + m.missing, 0),
        copyIntentsAtEnd: ms.at(-1)?.copyIntents ?? Number.NaN,
      };
    };
    const first = window(0, w);
    const last = window(minutes.length - w, minutes.length);
    const ratioChange = last.serviceOverBase / first.serviceOverBase;
    const rawChange = last.serviceOpenP50Ms / first.serviceOpenP50Ms;
    const diffChange = last.serviceMinusBaseMs / first.serviceMinusBaseMs;
    const flat = Math.abs(ratioChange - 1) <= 0.2;
    // The issue's words are "within 20 %", which a run whose last window is faster than its first (its first minutes
    // loaded by something else) also fails; what the rule guards against is slowing down with age, said apart.
    const noSlower = ratioChange <= 1.2;
    console.log('\n## soak windows');
    console.table([first, last]);
    report('soak', minutes as unknown as Array<Record<string, number>>, {
      minutes: MINUTES,
      slaves: { B: SLAVES_B, C: SLAVES_C },
      baseline: { B: 1, C: 1 },
      everyMs: EVERY_MS,
      windowMinutes: w,
      first,
      last,
      // The verdict: the service's p50 over the baseline's, last window over first, within 20 %.
      serviceOverBaseLastOverFirst: r3(ratioChange),
      flat,
      noSlower,
      // Kept beside it: the raw rule (absolute p50s) and the service's own share in ms.
      rawLastOverFirst: r3(rawChange),
      rawFlat: Math.abs(rawChange - 1) <= 0.2,
      serviceMinusBaseLastOverFirst: r3(diffChange),
      perMinute: minutes,
    });
    console.log(
      `soak: service/baseline open p50 first ${w} min ${first.serviceOverBase} (${first.serviceOpenP50Ms} / ${first.baseOpenP50Ms} ms, load ${first.load1}), last ${w} min ${last.serviceOverBase} (${last.serviceOpenP50Ms} / ${last.baseOpenP50Ms} ms, load ${last.load1}) = ${(ratioChange * 100).toFixed(0)} % (flat: within 20 %: ${flat}; no slower than 120 %: ${noSlower}); raw ${(rawChange * 100).toFixed(0)} %`,
    );
  } finally {
    await base.stop();
    await p.close();
  }
}
