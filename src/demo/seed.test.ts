import { describe, expect, it } from 'vitest';
import type { DemoBrokers, DemoSimAccount } from './demo-brokers.js';
import { SPARE_KEYS, ensureSpareAccounts } from './seed.js';

/** Brokers whose createAccount answers only once `release` is called: what was asked for together is visible. */
function gatedBrokers() {
  const made: DemoSimAccount[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const waiting: Array<() => void> = [];
  const brokers = {
    accounts: async () => made.map((a) => ({ ...a, meta: { ...a.meta } })),
    createAccount: (init: { meta?: Record<string, string> }) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise<DemoSimAccount>((resolve) =>
        waiting.push(() => {
          inFlight--;
          const a = { id: `acc-${made.length}`, login: String(1000 + made.length), meta: { ...(init.meta ?? {}) } };
          made.push(a);
          resolve(a);
        }),
      );
    },
  } as unknown as DemoBrokers;
  const releaseAll = () => {
    for (const go of waiting.splice(0)) go();
  };
  return { brokers, made, releaseAll, maxInFlight: () => maxInFlight, asked: () => waiting.length };
}

describe('demo spare accounts', () => {
  it('are asked for together, once each, the two platform B spares under one login', async () => {
    const b = gatedBrokers();
    const done = ensureSpareAccounts(b.brokers);
    // Every spare is requested before any answer: one after another, only one would be waiting here.
    const until = Date.now() + 5000;
    while (b.asked() < SPARE_KEYS.length && Date.now() < until) await new Promise((r) => setImmediate(r));
    expect(b.asked()).toBe(SPARE_KEYS.length);
    b.releaseAll();
    await done;
    expect(b.maxInFlight()).toBe(SPARE_KEYS.length);
    expect(b.made.map((a) => a.meta.demoKey).sort()).toEqual([...SPARE_KEYS].sort());
    const bSpares = b.made.filter((a) => a.meta.demoKey?.startsWith('spare-b-'));
    expect(bSpares).toHaveLength(2);
    expect(bSpares[0]!.meta.password).toBeTruthy();
    expect(bSpares[0]!.meta.password).toBe(bSpares[1]!.meta.password);

    // A second run finds them all and makes none.
    await ensureSpareAccounts(b.brokers);
    expect(b.asked()).toBe(0);
    expect(b.made).toHaveLength(SPARE_KEYS.length);
  });

  it('a spare made by an earlier, interrupted run keeps its login: the missing B spare gets the same password', async () => {
    const b = gatedBrokers();
    const first = ensureSpareAccounts(b.brokers);
    const until = Date.now() + 5000;
    while (b.asked() < SPARE_KEYS.length && Date.now() < until) await new Promise((r) => setImmediate(r));
    b.releaseAll();
    await first;
    const kept = b.made.find((a) => a.meta.demoKey === 'spare-b-1')!;
    b.made.splice(b.made.indexOf(b.made.find((a) => a.meta.demoKey === 'spare-b-2')!), 1);
    const second = ensureSpareAccounts(b.brokers);
    while (b.asked() < 1 && Date.now() < until) await new Promise((r) => setImmediate(r));
    b.releaseAll();
    await second;
    expect(b.made.find((a) => a.meta.demoKey === 'spare-b-2')!.meta.password).toBe(kept.meta.password);
  });
});
