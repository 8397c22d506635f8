import type { InstrumentSpec } from '../domain/types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';

/** Instrument specs rarely change and every copy needs one per Slave: cached per live adapter. */
export class SpecCache {
  private readonly specs = new WeakMap<BrokerAdapter, Map<string, Promise<InstrumentSpec | null>>>();
  private readonly known = new WeakMap<BrokerAdapter, Map<string, InstrumentSpec>>();

  get(adapter: BrokerAdapter, symbol: string): Promise<InstrumentSpec | null> {
    let m = this.specs.get(adapter);
    if (!m) this.specs.set(adapter, (m = new Map()));
    let p = m.get(symbol);
    if (!p) {
      // A read refused under a burst is not "not listed": asked again twice before the copy is given up.
      p = retry(() => adapter.instrument(symbol), [150, 500]).catch(() => null);
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

async function retry<T>(fn: () => Promise<T>, waitsMs: number[]): Promise<T> {
  for (const ms of waitsMs) {
    try {
      return await fn();
    } catch {
      await new Promise((r) => setTimeout(r, ms));
    }
  }
  return fn();
}
