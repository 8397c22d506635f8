import { describe, expect, it } from 'vitest';
import type { InstrumentSpec } from '../domain/types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';
import { SpecCache } from './spec-cache.js';

const SPEC = { symbol: 'EURUSD' } as InstrumentSpec;

/** An adapter whose instrument read fails `failures` times, then answers. */
const flaky = (failures: number) => {
  let calls = 0;
  const adapter = {
    instrument: async () => {
      calls++;
      if (calls <= failures) throw new Error('no answer within 1500 ms');
      return SPEC;
    },
  } as unknown as BrokerAdapter;
  return { adapter, calls: () => calls };
};

describe('instrument specs under pressure', () => {
  it('a read that keeps failing while our loop runs freely is given up after three tries (null: the copy is skipped)', async () => {
    const { adapter, calls } = flaky(100);
    expect(await new SpecCache(() => 0).get(adapter, 'EURUSD')).toBeNull();
    expect(calls()).toBe(3);
  });

  it('reads that failed while our own loop was stalled are not counted: the spec is found, not "not listed"', async () => {
    const { adapter, calls } = flaky(5);
    let stalled = 0;
    // Each time the cache looks, another 2 s of our own stall have passed: every failed read waited behind us.
    const cache = new SpecCache(() => (stalled += 2_000));
    expect(await cache.get(adapter, 'EURUSD')).toEqual(SPEC);
    expect(calls()).toBe(6);
  });
});
