import type { InstrumentSpec } from '../domain/types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';
import { loopStalledMs, stalledByUs } from './health/loop-lag.js';

/** Instrument specs rarely change and every copy needs one per Slave: cached per live adapter. */
export class SpecCache {
  private readonly specs = new WeakMap<BrokerAdapter, Map<string, Promise<InstrumentSpec | null>>>();
  private readonly known = new WeakMap<BrokerAdapter, Map<string, InstrumentSpec>>();

  /** `stalled`: our own event loop's total stall in ms (./health/loop-lag.ts; injected by tests). */
  constructor(private readonly stalled: () => number = loopStalledMs) {}

  get(adapter: BrokerAdapter, symbol: string): Promise<InstrumentSpec | null> {
    let m = this.specs.get(adapter);
    if (!m) this.specs.set(adapter, (m = new Map()));
    let p = m.get(symbol);
    if (!p) {
      // A read refused under a burst is not "not listed": asked again twice before the copy is given up, and a
      // read that failed while our own loop was stalled (its answer waited behind us) is not one of the three.
      p = retry(() => adapter.instrument(symbol), [150, 500], this.stalled).catch(() => null);
      m.set(symbol, p);
      void p.then((s) => {
        if (s) this.known.get(adapter)?.set(symbol, s) ?? this.known.set(adapter, new Map([[symbol, s]]));
        else m!.delete(symbol);
      });
    }
    return p;
  }

  /** The cached spec without a promise per Slave (a fan-out to 1000 Slaves asks 1000 times). */
  now(adapter: BrokerAdapter, symbol: string): InstrumentSpec | undefined {
    return this.known.get(adapter)?.get(symbol);
  }
}

/** Our own stalls may not keep a read going for longer than this (a copy's maxDelayMs is 60 s by default). */
const OUR_STALLS_MAX_MS = 30_000;

async function retry<T>(fn: () => Promise<T>, waitsMs: number[], stalled: () => number): Promise<T> {
  const began = performance.now();
  let failures = 0;
  for (;;) {
    const before = stalled();
    const t0 = performance.now();
    try {
      return await fn();
    } catch (err) {
      const ours = stalledByUs(stalled() - before, performance.now() - t0);
      if (!ours || performance.now() - began >= OUR_STALLS_MAX_MS) failures++;
      if (failures > waitsMs.length) throw err;
      await new Promise((r) => setTimeout(r, waitsMs[Math.max(0, failures - 1)] ?? 0));
    }
  }
}
