import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { LeaseKeeper } from '../../src/engine/lease-keeper.js';
import { requirePostgres } from '../helpers/postgres.js';
import { twoStores } from '../helpers/two-stores.js';

const available = await requirePostgres();

/** Polls `cond` (each try runs `step` first) until true, at most `max` tries 50 ms apart. */
async function until(step: () => Promise<unknown>, cond: () => boolean, max = 100): Promise<void> {
  for (let i = 0; i < max; i++) {
    await step();
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached');
}

describe.runIf(available)('LeaseKeeper: two workers on one PostgreSQL store', () => {
  let a: Store;
  let b: Store;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ a, b, close } = await twoStores());
  });
  afterAll(async () => close?.());

  const keeper = (store: Store, owner: string, keys: string[], ttlMs: number) => {
    const events: string[] = [];
    const k = new LeaseKeeper(store.leases, {
      owner,
      ttlMs,
      wanted: async () => keys,
      onAcquired: async (got) => {
        events.push(`+${got.join(',')}`);
      },
      onLost: async (lost) => {
        events.push(`-${lost.join(',')}`);
      },
    });
    return { k, events };
  };

  it('the first worker takes every key in order; the second takes them only once released, at the next epoch', async () => {
    const keys = ['account:m1', 'account:m2', 'account:s1'];
    const w1 = keeper(a, 'w1', keys, 60_000);
    const w2 = keeper(b, 'w2', keys, 60_000);
    await w1.k.start();
    expect(w1.k.heldKeys()).toEqual(keys);
    expect(w1.events).toEqual(['+account:m1,account:m2,account:s1']);
    expect(w1.k.epochOf('account:m1')).toBe(1);

    await w2.k.tick();
    expect(w2.k.heldKeys()).toEqual([]);

    // SIGTERM: the work stops, then every lease is released at once.
    await w1.k.stop();
    await w1.k.releaseAll();
    expect(w1.k.epochOf('account:m1')).toBeUndefined();
    await w2.k.tick();
    await w2.k.stop();
    expect(w2.k.heldKeys()).toEqual(keys);
    expect(w2.k.epochOf('account:m1')).toBe(2);
    await w2.k.releaseAll();
  });

  it('a worker that stops renewing loses its keys to the other within the TTL, and learns it at its next renewal', async () => {
    const keys = ['account:m9'];
    const paused = keeper(a, 'p1', keys, 1000);
    await paused.k.tick();
    expect(paused.k.holds('account:m9')).toBe(true);
    // `paused` renews no more (as if SIGSTOPped); the other worker polls until the lease expired and is its own.
    const other = keeper(b, 'p2', keys, 60_000);
    await until(
      () => other.k.tick(),
      () => other.k.holds('account:m9'),
    );
    expect(other.k.epochOf('account:m9')).toBe(2);
    // Woken up: the renewal fails, the key leaves its fence and its work is stopped.
    await paused.k.tick();
    await paused.k.stop();
    expect(paused.k.holds('account:m9')).toBe(false);
    expect(paused.events).toEqual(['+account:m9', '-account:m9']);
    await other.k.stop();
    await other.k.releaseAll();
  });

  it('takes only its fair share while another worker is live', async () => {
    const keys = ['account:f1', 'account:f2', 'account:f3', 'account:f4'];
    const w1 = keeper(a, 'f1', keys.slice(0, 2), 60_000);
    await w1.k.tick();
    const w2 = keeper(b, 'f2', keys, 60_000);
    await w2.k.tick();
    // Two live owners, four keys: two each (w1 holds f1 and f2).
    expect(w2.k.heldKeys()).toEqual(['account:f3', 'account:f4']);
    await Promise.all([w1.k.stop(), w2.k.stop()]);
    await Promise.all([w1.k.releaseAll(), w2.k.releaseAll()]);
  });

  it('a local clock past the TTL takes the key out of the fence even before the store is asked', async () => {
    let now = 0;
    const k = new LeaseKeeper(a.leases, {
      owner: 'c1',
      ttlMs: 60_000,
      clock: () => now,
      wanted: async () => ['account:c1'],
      onAcquired: async () => undefined,
      onLost: async () => undefined,
    });
    await k.tick();
    expect(k.epochOf('account:c1')).toBe(1);
    now = 60_001;
    expect(k.epochOf('account:c1')).toBeUndefined();
    await k.tick();
    expect(k.epochOf('account:c1')).toBe(1);
    await k.stop();
    await k.releaseAll();
  });

  it('broker writes stop a margin before the lease runs out on the local monotonic clock, while the fence still holds', async () => {
    let now = 0;
    const k = new LeaseKeeper(a.leases, {
      owner: 'm1',
      ttlMs: 10_000,
      writeMarginMs: 2_000,
      clock: () => now,
      wanted: async () => ['account:w1'],
      onAcquired: async () => undefined,
      onLost: async () => undefined,
    });
    await k.tick();
    now = 7_999;
    expect(k.mayWrite('account:w1')).toBe(true);
    // A process stopped for long enough sees on waking that its time has passed, before any renewal could run.
    now = 8_001;
    expect(k.mayWrite('account:w1')).toBe(false);
    expect(k.holds('account:w1')).toBe(true);
    expect(k.mayWrite('account:other')).toBe(false);
    // Renewed (measured from before the call): writes may leave again.
    await k.tick();
    expect(k.mayWrite('account:w1')).toBe(true);
    await k.stop();
    await k.releaseAll();
    expect(k.mayWrite('account:w1')).toBe(false);
  });

  it('renews every lease it holds in one statement per round', async () => {
    const keys = ['account:b1', 'account:b2', 'account:b3'];
    const w = keeper(a, 'b1', keys, 60_000);
    await w.k.tick();
    const many = vi.spyOn(a.leases, 'renewMany');
    const one = vi.spyOn(a.leases, 'renew');
    try {
      await w.k.tick();
      expect(many).toHaveBeenCalledTimes(1);
      expect(many.mock.calls[0]![1].map((h) => h.key).sort()).toEqual(keys);
      expect(one).not.toHaveBeenCalled();
      expect(w.k.heldKeys()).toEqual(keys);
    } finally {
      many.mockRestore();
      one.mockRestore();
    }
    await w.k.stop();
    await w.k.releaseAll();
  });
});
