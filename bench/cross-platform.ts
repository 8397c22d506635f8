// Issue 4 figures: copy latency across platforms B and C through the real adapters on loopback, and 500 Slaves
// behind rate-limited connections. Benchmarks, not tests: each prints a table and writes bench/results/*.json.
import { Decimal } from '../src/domain/decimal.js';
import type { Side } from '../src/domain/types.js';
import { Dispatcher } from '../src/engine/dispatcher.js';
import type { BrokerAdapter, OrderOutcome } from '../src/platforms/adapter.js';
import { createCTraderAdapterFactory, type CTraderAdapterFactory } from '../src/platforms/ctrader/factory.js';
import { RateWindow } from '../src/platforms/ctrader/rate-window.js';
import { discoverTradeLockerAccounts } from '../src/platforms/tradelocker/connect.js';
import { createTradeLockerAdapterFactory } from '../src/platforms/tradelocker/factory.js';
import { SimBroker } from '../src/simulator/broker.js';
import { startCTraderSimServer, type CTraderSimServer } from '../src/simulator/ctrader/server.js';
import { SimSession } from '../src/simulator/ctrader/session.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from '../src/simulator/tradelocker/server.js';
import { percentile, report, type Row } from './lib.js';

const REPS = Number(process.env.BENCH_REPS ?? 50);
const WARMUP_REPS = 3;
/**
 * Gap between repetitions (a Master trading about once a second). The Dispatcher gives each account a token bucket
 * of `capabilities.rateLimitPerSecond`, which is 2 per second (burst 2) for TradeLocker: at shorter gaps platform B
 * copies queue in that bucket, which the burst phase below shows.
 */
const REP_GAP_MS = 600;
/** Burst phase: Master trades back to back with this gap, to show what per-account pacing adds. */
const BURST_REPS = 10;
const BURST_GAP_MS = 100;
const SCALE_N = Number(process.env.BENCH_SCALE_N ?? 500);
/** The simulator's per-connection limit on platform C (the real Open API's: 50 req/s). */
const C_LIMIT_PER_S = 50;
const VOLUME = new Decimal('0.1');
const SYMBOL = 'EURUSD';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const ms = (v: number) => Math.round(v * 10) / 10;

/** Every benchmark stops by itself: a hung phase fails the run instead of hanging it. */
function within<T>(p: Promise<T>, limitMs: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  const guard = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what} did not finish within ${limitMs} ms`)), limitMs);
    t.unref();
  });
  return Promise.race([p, guard]).finally(() => clearTimeout(t));
}

/**
 * Counts BLOCKED_PAYLOAD_TYPE refusals where the server decides them: wraps the simulator's per-connection window
 * check (behaviour unchanged, the refusal is still sent). Returns the counter and the undo.
 */
function countCTraderRefusals(): { count(): number; reset(): void; restore(): void } {
  const proto = SimSession.prototype;
  const original = proto.rateLimited;
  let n = 0;
  proto.rateLimited = function (this: SimSession, payloadType: number) {
    const r = original.call(this, payloadType);
    if (r !== null) n++;
    return r;
  };
  return { count: () => n, reset: () => void (n = 0), restore: () => void (proto.rateLimited = original) };
}

/**
 * The cTrader pacing before issue 12, for a baseline in the same run: each request counted from its send for
 * 1.2 s (the margin for arrivals bunching up). Patches RateWindow's prototype; returns the undo.
 */
function sendTimeWindow(): () => void {
  const proto = RateWindow.prototype;
  const original = proto.acquire;
  const sent = new WeakMap<RateWindow, number[]>();
  proto.acquire = async function (this: RateWindow) {
    const perSecond = (this as unknown as { perSecond: number }).perSecond;
    if (!sent.has(this)) sent.set(this, []);
    const times = sent.get(this)!;
    for (;;) {
      const now = Date.now();
      while (times.length > 0 && now - times[0]! >= 1_200) times.shift();
      if (times.length < perSecond) {
        times.push(now);
        return { answered: () => undefined };
      }
      await sleep(times[0]! + 1_200 - now + 1);
    }
  };
  return () => void (proto.acquire = original);
}

/** A fetch that counts HTTP 429 answers on the TradeLocker wire. */
function countingFetch(): { fetch: typeof fetch; count(): number; reset(): void } {
  let n = 0;
  const f: typeof fetch = async (input, init) => {
    const r = await fetch(input, init);
    if (r.status === 429) n++;
    return r;
  };
  return { fetch: f, count: () => n, reset: () => void (n = 0) };
}

const outcomeKey = (o: OrderOutcome) =>
  o.kind === 'confirmed' ? (o.positionId ? 'filled' : 'confirmed_no_fill') : `${o.kind}:${o.code}`;
const tally = (outs: OrderOutcome[]) => {
  const m: Record<string, number> = {};
  for (const o of outs) m[outcomeKey(o)] = (m[outcomeKey(o)] ?? 0) + 1;
  return Object.entries(m)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
};

interface Slave {
  id: string;
  platform: 'B' | 'C';
  adapter: BrokerAdapter;
}

async function tradeLockerSlaves(
  broker: SimBroker,
  server: TradeLockerSimServer,
  n: number,
  fetchImpl?: typeof fetch,
): Promise<Slave[]> {
  const factory = createTradeLockerAdapterFactory({
    resolveBaseUrl: () => server.baseUrl,
    timeoutMs: 15_000,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const logins = Array.from({ length: n }, (_, i) => {
    const meta = { email: `slave-b${i}@bench.test`, password: `pw-b${i}`, server: 'SIMBROKER', environment: 'demo' };
    const sim = broker.createAccount({ balance: 1_000_000, meta });
    return { meta, sim };
  });
  return Promise.all(
    logins.map(async ({ meta, sim }, i) => {
      const [picked] = await discoverTradeLockerAccounts({
        baseUrl: server.baseUrl,
        email: meta.email,
        password: meta.password,
        server: meta.server,
        ...(fetchImpl ? { fetch: fetchImpl } : {}),
      });
      const adapter = await factory.create({
        id: `acc_b${i}`,
        brokerAccountId: picked!.id,
        environment: 'demo',
        credentials: {
          email: meta.email,
          password: meta.password,
          server: meta.server,
          accNum: picked!.accNum,
          accountId: picked!.id,
        },
      });
      if (picked!.id !== sim.login) throw new Error(`TradeLocker account ${picked!.id} is not ${sim.login}`);
      return { id: `acc_b${i}`, platform: 'B' as const, adapter };
    }),
  );
}

async function cTraderSlaves(
  broker: SimBroker,
  server: CTraderSimServer,
  n: number,
  usersOf: (i: number) => string,
  accountsPerConnection?: number,
): Promise<{ slaves: Slave[]; factory: CTraderAdapterFactory }> {
  const factory = createCTraderAdapterFactory({
    resolveEndpoint: (env) => ({ ...(env === 'live' ? server.endpoints.live : server.endpoints.demo), ca: server.ca }),
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    oauthBaseUrl: server.oauthBaseUrl,
    timeoutMs: 15_000,
    ...(accountsPerConnection !== undefined ? { accountsPerConnection } : {}),
  });
  const tokens = new Map<string, ReturnType<CTraderSimServer['issueTokenFor']>>();
  const slaves: Slave[] = [];
  for (let i = 0; i < n; i++) {
    const user = usersOf(i);
    const sim = broker.createAccount({ balance: 1_000_000, meta: { ctidUserId: user, environment: 'demo' } });
    if (!tokens.has(user)) tokens.set(user, server.issueTokenFor(user));
    const ctid = server.ctidTraderAccountIdOf(sim.id);
    const adapter = await factory.create({
      id: `acc_c${i}`,
      brokerAccountId: ctid,
      environment: 'demo',
      credentials: { ...tokens.get(user)!, ctidTraderAccountId: ctid },
    });
    slaves.push({ id: `acc_c${i}`, platform: 'C', adapter });
  }
  return { slaves, factory };
}

/**
 * Warm every slave outside the timed part: sign-in, config and instruments (B); account auth and symbols (C).
 * At most `concurrency` at once: a cold cTrader account's auth waits in the connection's pacing queue and that
 * wait counts against the auth timeout, so 500 cold accounts started together time out (see the report).
 */
async function warm(slaves: Slave[], concurrency = slaves.length): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < slaves.length) {
      const s = slaves[next++]!;
      if (!(await s.adapter.instrument(SYMBOL))) throw new Error(`${s.id} has no ${SYMBOL}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, slaves.length) }, worker));
}

function stats(xs: number[]): { n: number; p50: number; p99: number; max: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: ms(percentile(s, 50)),
    p99: ms(percentile(s, 99)),
    max: ms(s.at(-1)!),
    mean: ms(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

/**
 * Figure 1: a Master fill on the simulator (in-process market order) -> market orders to 5 platform B Slaves
 * (TradeLocker REST adapter) and 5 platform C Slaves (cTrader Open API adapter) through the Dispatcher, all at
 * once; per Slave, the time from the Master's fill to the adapter's confirmed fill (outcome with a position).
 * Repetitions alternate buy and sell; positions stay open (hedging accounts), so no close traffic between reps.
 */
export async function benchCrossPlatformLatency(): Promise<void> {
  const broker = new SimBroker({ seed: 4 });
  const master = broker.createAccount({ balance: 10_000_000 });
  const tl = await startTradeLockerSimServer(broker, { environment: 'demo' });
  const ct = await startCTraderSimServer(broker);
  let factoryC: CTraderAdapterFactory | null = null;
  const slaves: Slave[] = [];
  try {
    slaves.push(...(await tradeLockerSlaves(broker, tl, 5)));
    const c = await cTraderSlaves(broker, ct, 5, (i) => `bench-user-${i}`);
    factoryC = c.factory;
    slaves.push(...c.slaves);
    await within(warm(slaves), 30_000, 'warm-up');

    const dispatcher = new Dispatcher();
    const lat: Record<'B' | 'C', number[]> = { B: [], C: [] };
    const burst: Record<'B' | 'C', number[]> = { B: [], C: [] };
    const lastPerRep: number[] = [];
    const failures: OrderOutcome[] = [];
    for (let rep = -WARMUP_REPS; rep < REPS + BURST_REPS; rep++) {
      const inBurst = rep >= REPS;
      const side: Side = rep % 2 === 0 ? 'buy' : 'sell';
      const masterTag = `m${rep + WARMUP_REPS}`;
      broker.placeOrder(master.id, { symbol: SYMBOL, side, type: 'market', volume: new Decimal(1), tag: masterTag });
      const t0 = performance.now(); // the Master's fill is done (synchronous in the simulator)
      const done = await within(
        Promise.all(
          slaves.map(async (s) => {
            const out = await dispatcher.place(s.id, s.adapter, {
              symbol: SYMBOL,
              side,
              type: 'market',
              volume: VOLUME,
              tag: `${masterTag}-${s.id}`,
            });
            return { s, out, t: performance.now() - t0 };
          }),
        ),
        20_000,
        `repetition ${rep}`,
      );
      if (rep >= 0) {
        for (const { s, out, t } of done) {
          if (out.kind === 'confirmed' && out.positionId) (inBurst ? burst : lat)[s.platform].push(t);
          else failures.push(out);
        }
        if (!inBurst) lastPerRep.push(Math.max(...done.map((d) => d.t)));
      }
      await sleep(rep + 1 >= REPS ? BURST_GAP_MS : REP_GAP_MS);
    }
    const row = (what: string, xs: number[], target = ''): Row => {
      const st = stats(xs);
      return {
        measure: what,
        samples: st.n,
        'p50 ms': st.p50,
        'p99 ms': st.p99,
        'max ms': st.max,
        'mean ms': st.mean,
        target,
      };
    };
    report(
      'cross-platform-latency',
      [
        row('Master fill -> Slave fill confirmed, platform B (TradeLocker REST, 5 Slaves)', lat.B),
        row('Master fill -> Slave fill confirmed, platform C (cTrader Open API, 5 Slaves)', lat.C),
        row('Master fill -> Slave fill confirmed, B and C (10 Slaves)', [...lat.B, ...lat.C]),
        row('Master fill -> last of the 10 Slaves filled (per repetition)', lastPerRep),
        row(
          `burst: Master trades ${BURST_GAP_MS} ms apart, platform B`,
          burst.B,
          'paced by the served limits only (selfPaced)',
        ),
        row(`burst: Master trades ${BURST_GAP_MS} ms apart, platform C`, burst.C),
      ],
      {
        reps: REPS,
        warmupReps: WARMUP_REPS,
        repGapMs: REP_GAP_MS,
        burstReps: BURST_REPS,
        burstGapMs: BURST_GAP_MS,
        slaves: { B: 5, C: 5 },
        volume: VOLUME.toString(),
        symbol: SYMBOL,
        failures: failures.length,
        failureKinds: tally(failures),
        note: 'loopback, simulator and service in one process; B: POST order + ordersHistory read-back per fill; C: NEW_ORDER_REQ answered by execution events',
      },
    );
    if (failures.length > 0) console.log(`failures: ${failures.length} (${tally(failures)})`);
  } finally {
    await Promise.all(slaves.map((s) => s.adapter.close().catch(() => undefined)));
    await factoryC?.closeAll();
    await Promise.all([tl.close(), ct.close()]);
  }
}

/**
 * Figure 2, platform C: N Slaves on one cTrader connection (one OAuth user holds them all, so one token authorises
 * every account). Account auth and symbol loading happen before the timed part (they count against the same
 * 50 req/s); then one market order per Slave, all dispatched at once. Refusals are counted at the simulator.
 */
export async function benchCrossPlatformScaleC(SCALE_N = Number(process.env.BENCH_SCALE_N ?? 500)): Promise<void> {
  const broker = new SimBroker({ seed: 5 });
  const ct = await startCTraderSimServer(broker, { rateLimitPerSecond: C_LIMIT_PER_S });
  const refusals = countCTraderRefusals();
  let factory: CTraderAdapterFactory | null = null;
  let slaves: Slave[] = [];
  try {
    // One window is what this figure measures (issue 12's pacing): every Slave on one connection, not the pool.
    const c = await cTraderSlaves(broker, ct, SCALE_N, () => 'bench-user', SCALE_N);
    factory = c.factory;
    slaves = c.slaves;
    const p0 = performance.now();
    await within(warm(slaves, 50), 180_000, 'authorising and loading symbols');
    const prepS = (performance.now() - p0) / 1000;
    const prepRefusals = refusals.count();
    const prepRequests = 1 + 3 * SCALE_N; // app auth, then per account: account auth, symbol list, symbol by id
    const conns = factory.connections().size;
    await sleep(1100); // let the prep traffic leave the server's one-second window

    refusals.reset();
    const dispatcher = new Dispatcher();
    const t0 = performance.now();
    const done = await within(
      Promise.all(
        slaves.map(async (s, i) => {
          const out = await dispatcher.place(s.id, s.adapter, {
            symbol: SYMBOL,
            side: 'buy',
            type: 'market',
            volume: VOLUME,
            tag: `scale-c-${i}`,
          });
          return { out, t: performance.now() - t0 };
        }),
      ),
      120_000,
      'the timed burst',
    );
    const totalS = Math.max(...done.map((d) => d.t)) / 1000;
    const idealS = SCALE_N / (C_LIMIT_PER_S * conns);
    const outs = done.map((d) => d.out);
    const filled = outs.filter((o) => o.kind === 'confirmed' && o.positionId).length;
    const per = stats(done.map((d) => d.t));
    const timedRefusals = refusals.count();

    // Baseline, same run and connections: the pacing before issue 12 (a 1.2 s window on send times).
    await sleep(1100);
    refusals.reset();
    const undo = sendTimeWindow();
    const b0 = performance.now();
    const before = await within(
      Promise.all(
        slaves.map(async (s, i) => {
          const out = await dispatcher.place(s.id, s.adapter, {
            symbol: SYMBOL,
            side: 'buy',
            type: 'market',
            volume: VOLUME,
            tag: `scale-c-b${i}`,
          });
          return { out, t: performance.now() - b0 };
        }),
      ),
      120_000,
      'the baseline burst',
    ).finally(undo);
    const baselineS = Math.max(...before.map((d) => d.t)) / 1000;
    const baselineRefusals = refusals.count();
    const baselineFilled = before.filter((d) => d.out.kind === 'confirmed' && d.out.positionId).length;
    report(
      `cross-platform-${SCALE_N}c`,
      [
        {
          measure: `rate-limit refusals (BLOCKED_PAYLOAD_TYPE) at the simulator, timed part`,
          value: timedRefusals,
          target: '0',
        },
        {
          measure: `orders filled (outcome confirmed with a position)`,
          value: `${filled} / ${SCALE_N}`,
          target: `${SCALE_N}`,
        },
        {
          measure: `completion time, ${SCALE_N} market orders dispatched at once (s)`,
          value: Math.round(totalS * 100) / 100,
          target: `<= ${(idealS * 1.05).toFixed(1)}`,
        },
        {
          measure: `ideal N / total rate = ${SCALE_N} / ${C_LIMIT_PER_S * conns} per s (s)`,
          value: idealS,
          target: '',
        },
        { measure: 'completion / ideal', value: `${((totalS / idealS) * 100).toFixed(1)} %`, target: '<= 105 %' },
        {
          measure: 'baseline, same run: 1.2 s window on send times (before issue 12): completion / ideal',
          value: `${((baselineS / idealS) * 100).toFixed(1)} %`,
          target: `${baselineFilled} filled, ${baselineRefusals} refusals`,
        },
        {
          measure: 'per-order time to confirmed fill (s): p50 / p99',
          value: `${(per.p50 / 1000).toFixed(2)} / ${(per.p99 / 1000).toFixed(2)}`,
          target: '',
        },
        {
          measure: `untimed prep: ${prepRequests} requests (auth + symbols per account) (s)`,
          value: Math.round(prepS * 100) / 100,
          target: `ideal ${(prepRequests / (C_LIMIT_PER_S * conns)).toFixed(1)}`,
        },
        { measure: 'rate-limit refusals during prep', value: prepRefusals, target: '0' },
      ],
      {
        n: SCALE_N,
        limitPerSecond: C_LIMIT_PER_S,
        connections: conns,
        outcomes: tally(outs),
        timedRefusals,
        prepRefusals,
        prepS,
        totalS,
        idealS,
        baselineS,
        baselineRefusals,
        baselineFilled,
      },
    );
  } finally {
    refusals.restore();
    await Promise.all(slaves.map((s) => s.adapter.close().catch(() => undefined)));
    await factory?.closeAll();
    await ct.close();
  }
}

/**
 * Figure 2, platform B: N TradeLocker Slaves, one user and one sign-in each. TradeLocker serves its limits per
 * account and route (/trade/config rateLimits; the simulator's default is 20 per second per route), so N accounts
 * have N times the budget: one order each fits in every account's own burst and N / total rate is not the bound.
 * Counts 429s on the wire, and reports completion time.
 */
export async function benchCrossPlatformScaleB(): Promise<void> {
  const broker = new SimBroker({ seed: 6 });
  const tl = await startTradeLockerSimServer(broker, { environment: 'demo' });
  const counting = countingFetch();
  let slaves: Slave[] = [];
  try {
    slaves = await within(tradeLockerSlaves(broker, tl, SCALE_N, counting.fetch), 120_000, 'discovering accounts');
    const p0 = performance.now();
    await within(warm(slaves), 120_000, 'signing in and loading config');
    const prepS = (performance.now() - p0) / 1000;
    const prep429 = counting.count();
    counting.reset();
    const dispatcher = new Dispatcher();
    const t0 = performance.now();
    const done = await within(
      Promise.all(
        slaves.map(async (s, i) => {
          const out = await dispatcher.place(s.id, s.adapter, {
            symbol: SYMBOL,
            side: 'buy',
            type: 'market',
            volume: VOLUME,
            tag: `scale-b-${i}`,
          });
          return { out, t: performance.now() - t0 };
        }),
      ),
      120_000,
      'the timed burst',
    );
    const totalS = Math.max(...done.map((d) => d.t)) / 1000;
    const outs = done.map((d) => d.out);
    const filled = outs.filter((o) => o.kind === 'confirmed' && o.positionId).length;
    const per = stats(done.map((d) => d.t));
    report(
      'cross-platform-500b',
      [
        { measure: 'HTTP 429 on the wire, timed part', value: counting.count(), target: '0' },
        {
          measure: 'orders filled (outcome confirmed with a position)',
          value: `${filled} / ${SCALE_N}`,
          target: `${SCALE_N}`,
        },
        {
          measure: `completion time, ${SCALE_N} market orders dispatched at once (s)`,
          value: Math.round(totalS * 100) / 100,
          target: '',
        },
        {
          measure: 'requests in the timed part (POST order + ordersHistory read-back each)',
          value: 2 * SCALE_N,
          target: '',
        },
        {
          measure: 'served limit per account: PLACE_ORDER and GET_ORDERS_HISTORY (per s)',
          value: 20,
          target: `ideal N / total rate = ${SCALE_N} / ${SCALE_N * 20} per s = 0.05 s`,
        },
        {
          measure: 'per-order time to confirmed fill (s): p50 / p99',
          value: `${(per.p50 / 1000).toFixed(2)} / ${(per.p99 / 1000).toFixed(2)}`,
          target: '',
        },
        {
          measure: `untimed prep: sign-in, config, instruments x ${SCALE_N} (s)`,
          value: Math.round(prepS * 100) / 100,
          target: '',
        },
        { measure: 'HTTP 429 during prep', value: prep429, target: '0' },
      ],
      { n: SCALE_N, outcomes: tally(outs), prepS, totalS },
    );
  } finally {
    await Promise.all(slaves.map((s) => s.adapter.close().catch(() => undefined)));
    await tl.close();
  }
}
