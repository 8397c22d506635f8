// Issue 12: a Master fill at the simulated broker -> 10 Slave fills (5 on platform B, 5 on C) through the whole
// service (watcher, engine, store, adapters, in a child process), beside the floor: the same adapters driven
// directly by this process (a Dispatcher and nothing else), alternating repetition by repetition in one run.
// Both are timed the same way, from the Master's fill to each Slave's fill event at the simulated broker.
import { Decimal } from '../src/domain/decimal.js';
import type { Side } from '../src/domain/types.js';
import { Dispatcher } from '../src/engine/dispatcher.js';
import type { BrokerAdapter } from '../src/platforms/adapter.js';
import { createCTraderAdapterFactory } from '../src/platforms/ctrader/factory.js';
import { createTradeLockerAdapterFactory } from '../src/platforms/tradelocker/factory.js';
import { serviceRuntime } from './deploy-runtime.js';
import { percentile, report } from './lib.js';
import { SYMBOL, startPipeline, type Pipeline } from './pipeline.js';

const REPS = Number(process.env.BENCH_REPS ?? 30);
const WARMUP = 3;
const GAP_MS = 300;
const LIMIT_MS = 20_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 10) / 10;
  return { n: s.length, p50: r(percentile(s, 50)), p99: r(percentile(s, 99)), max: r(s.at(-1) ?? 0) };
};

function must<T>(times: Map<string, T>, n: number, what: string): Map<string, T> {
  if (times.size < n) throw new Error(`${what}: ${n - times.size} of ${n} Slaves not filled within ${LIMIT_MS} ms`);
  return times;
}

/** The floor: the same Slaves' adapters in this process, dispatched at once on a Master fill of an unwatched account. */
async function directAdapters(p: Pipeline) {
  const b = createTradeLockerAdapterFactory({ resolveBaseUrl: () => p.tl.baseUrl, timeoutMs: 15_000 });
  const c = createCTraderAdapterFactory({
    resolveEndpoint: () => ({ ...p.ct.endpoints.demo, ca: p.ct.ca }),
    clientId: p.ct.clientId,
    clientSecret: p.ct.clientSecret,
    oauthBaseUrl: p.ct.oauthBaseUrl,
    timeoutMs: 15_000,
  });
  const adapters: Array<{ id: string; adapter: BrokerAdapter }> = [];
  for (const [i, s] of p.slaves.entries()) {
    const f = s.platform === 'B' ? b : c;
    const id = `direct_${i}`;
    const adapter = await f.create({
      id,
      brokerAccountId: s.brokerAccountId,
      environment: 'demo',
      credentials: s.credentials,
    });
    await adapter.instrument(SYMBOL);
    adapters.push({ id, adapter });
  }
  const master = p.broker.createAccount({ balance: 1_000_000 });
  const dispatcher = new Dispatcher();
  let n = 0;
  return {
    async rep(side: Side): Promise<number[]> {
      const tag = `direct-${n++}`;
      p.broker.placeOrder(master.id, { symbol: SYMBOL, side, type: 'market', volume: new Decimal('0.1'), tag });
      const t0 = performance.now();
      const filled = p.waitSlaves('position_opened', t0, LIMIT_MS);
      const outs = await Promise.all(
        adapters.map((a) =>
          dispatcher.place(a.id, a.adapter, {
            symbol: SYMBOL,
            side,
            type: 'market',
            volume: new Decimal('0.1'),
            tag: `${tag}-${a.id}`,
          }),
        ),
      );
      const times = [...must(await filled, p.slaves.length, 'direct open').values()];
      // Closed again, unmeasured, so both paths trade on the same state.
      const closed = p.waitSlaves('position_closed', performance.now(), LIMIT_MS);
      await Promise.all(
        outs.map((o, i) =>
          o.kind === 'confirmed' && o.positionId ? adapters[i]!.adapter.closePosition(o.positionId) : undefined,
        ),
      );
      must(await closed, p.slaves.length, 'direct close');
      return times;
    },
    close: async () => {
      await Promise.all(adapters.map((a) => a.adapter.close().catch(() => undefined)));
      await c.closeAll();
    },
  };
}

export async function benchE2e(): Promise<void> {
  const { nodeArgs, env } = serviceRuntime();
  const p = await startPipeline({ b: 5, c: 5, seed: 12, nodeArgs, env });
  const direct = await directAdapters(p).catch(async (err) => {
    await p.close();
    throw err;
  });
  try {
    const svc: Record<'B' | 'C' | 'all', number[]> = { B: [], C: [], all: [] };
    const flo: number[] = [];
    const last: number[] = [];
    const closes: number[] = [];
    const platformOf = new Map(p.slaves.map((s) => [s.sim, s.platform]));
    let warmCopies = 0;
    for (let rep = -WARMUP; rep < REPS; rep++) {
      if (rep === 0) warmCopies = (await p.latencies()).length;
      const side: Side = rep % 2 === 0 ? 'buy' : 'sell';
      const opened = must(await p.act({ kind: 'open', side }, rep < 0 ? 60_000 : LIMIT_MS), p.slaves.length, 'open');
      await sleep(GAP_MS);
      const closed = must(await p.act({ kind: 'close' }, LIMIT_MS), p.slaves.length, 'close');
      await sleep(GAP_MS);
      const base = await direct.rep(side);
      await sleep(GAP_MS);
      if (rep < 0) continue;
      for (const [sim, t] of opened) {
        svc[platformOf.get(sim)!].push(t);
        svc.all.push(t);
      }
      last.push(Math.max(...opened.values()));
      closes.push(...closed.values());
      flo.push(...base);
    }
    const s = stats(svc.all);
    const f = stats(flo);
    // Where the service's time goes, from its own ledger: the hops each measured copy recorded on its intent.
    const hops = (await p.latencies()).slice(warmCopies);
    const hop = (k: string) => hops.map((h) => h[k]).filter((v): v is number => typeof v === 'number');
    const inEngine = hops.map((h) => (h.plan ?? 0) + (h.record ?? 0) + (h.send ?? 0));
    const row = (measure: string, xs: number[], target = '') => {
      const st = stats(xs);
      return { measure, samples: st.n, 'p50 ms': st.p50, 'p99 ms': st.p99, 'max ms': st.max, target };
    };
    report(
      'e2e',
      [
        row('service: Master fill -> Slave fill, B and C (10 Slaves)', svc.all, '<= 15'),
        row('service: platform B (TradeLocker REST, 5)', svc.B),
        row('service: platform C (cTrader Open API, 5)', svc.C),
        row('service: Master fill -> last of the 10 filled', last),
        row('service: Master close -> Slave close', closes),
        row('floor: the same adapters driven directly (Dispatcher only)', flo),
        row('  in the service, of which: plan (action -> rows)', hop('plan')),
        row('  in the service, of which: record (one statement, one commit)', hop('record')),
        row('  in the service, of which: send (recorded -> handed to the adapter)', hop('send')),
        row('  in the service: plan + record + send', inEngine),
        {
          measure: 'ours: service p50 - floor p50 (ms)',
          samples: '',
          'p50 ms': Math.round((s.p50 - f.p50) * 10) / 10,
          'p99 ms': '',
          'max ms': '',
          target: '<= 5',
        },
        {
          // The rest of what the service adds: the Master's fill reaching it (cTrader's event on its socket, decoded,
          // the watcher) and what its adapters do differently from the floor's.
          measure: 'ours minus the engine (p50s): the fill reaching the watcher, and the rest',
          samples: '',
          'p50 ms': Math.round((s.p50 - f.p50 - stats(inEngine).p50) * 10) / 10,
          'p99 ms': '',
          'max ms': '',
          target: '',
        },
        {
          measure: 'service p50 / floor p50',
          samples: '',
          'p50 ms': `${(s.p50 / f.p50).toFixed(2)} x`,
          'p99 ms': '',
          'max ms': '',
          target: '',
        },
      ],
      { reps: REPS, warmup: WARMUP, gapMs: GAP_MS, slaves: { B: 5, C: 5 }, service: s, floor: f },
    );
  } finally {
    await direct.close();
    await p.close();
  }
}
