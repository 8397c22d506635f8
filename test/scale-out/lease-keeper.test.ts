import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { LeaseKeeper, planShare, presenceKey } from '../../src/engine/lease-keeper.js';
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
    // Its presence (renewed on waking) is withdrawn too, so the next tests count only their own workers.
    await paused.k.releaseAll();
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

  it('two workers started at once: one whose first look came before the other announced gives back its excess at once', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `account:p${i}`);
    // The race of two starts: s1 looks at the live workers just before s2's presence row is written.
    let looks = 0;
    const racing = Object.create(a.leases) as typeof a.leases;
    racing.live = async () => {
      const seen = await a.leases.live();
      if (++looks === 1) await b.leases.acquire(presenceKey('s2'), 's2', 60_000);
      return seen;
    };
    const acquired: string[] = [];
    const released: string[] = [];
    const s1 = new LeaseKeeper(racing, {
      owner: 's1',
      ttlMs: 60_000,
      wanted: async () => keys,
      onAcquired: async (got) => {
        acquired.push(...got);
      },
      onLost: async () => undefined,
      onReleased: (given) => released.push(...given),
    });
    await s1.start();
    // It took all ten blind, looked again, saw s2, and kept its share; only those were handed to the role.
    expect(s1.heldKeys()).toEqual(keys.slice(0, 5));
    expect(acquired).toEqual(keys.slice(0, 5));
    expect([...released].sort()).toEqual(keys.slice(5));
    // s2's first round finds the other half free.
    const s2 = keeper(b, 's2', keys, 60_000);
    await s2.k.tick();
    expect(s2.k.heldKeys()).toEqual(keys.slice(5));
    await Promise.all([s1.stop(), s2.k.stop()]);
    await Promise.all([s1.releaseAll(), s2.k.releaseAll()]);
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

  it('a round slowed in `wanted` (a loaded store) does not hold back the renewals: broker writes stay allowed', async () => {
    const ttlMs = 1_000;
    let stall: Promise<void> | null = null;
    let unstall: () => void = () => undefined;
    let stalledAt = 0;
    const k = new LeaseKeeper(a.leases, {
      owner: 'r1',
      ttlMs,
      renewMs: 100,
      wanted: async () => {
        if (stall) await stall;
        return ['account:r1'];
      },
      onAcquired: async () => undefined,
      onLost: async () => undefined,
    });
    await k.start();
    expect(k.mayWrite('account:r1')).toBe(true);
    const many = vi.spyOn(a.leases, 'renewMany');
    try {
      // The next rounds wait in `wanted` for longer than a whole TTL.
      stall = new Promise<void>((r) => {
        unstall = r;
      });
      stalledAt = performance.now();
      const renewedBefore = many.mock.calls.length;
      // Before, the renewal and the round were one: no renewal until the round ended, the lease ran out on the
      // local clock and `mayWrite` said no at 800 ms.
      await until(
        async () => undefined,
        () => performance.now() - stalledAt > 2 * ttlMs && many.mock.calls.length >= renewedBefore + 5,
      );
      expect(k.mayWrite('account:r1')).toBe(true);
      expect(k.holds('account:r1')).toBe(true);
    } finally {
      many.mockRestore();
      unstall();
    }
    await k.stop();
    await k.releaseAll();
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
      // With this worker's presence row (it counts in the shares even when it holds nothing).
      expect(many.mock.calls[0]![1].map((h) => h.key).sort()).toEqual([...keys, presenceKey('b1')]);
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

describe('planShare: who gives keys, and how many (hysteresis)', () => {
  const plan = (held: Record<string, number>, me: string, slack = 0) => {
    const keys: string[] = [];
    const owners = new Map<string, string>();
    for (const [w, n] of Object.entries(held))
      for (let i = 0; i < n; i++) {
        const k = `k-${w}-${i}`;
        keys.push(k);
        owners.set(k, w);
      }
    return planShare({ keys, owners, workers: Object.keys(held), me, mine: (k) => owners.get(k) === me, slack });
  };

  it('a worker holding everything gives the excess over ceil(n / workers), counting a worker that holds nothing', () => {
    expect(plan({ a: 4, b: 0 }, 'a')).toEqual({ mine: 4, hi: 2, lo: 2, give: 2 });
    expect(plan({ a: 3, b: 0 }, 'a')).toMatchObject({ hi: 2, give: 1 });
    expect(plan({ a: 10, b: 0, c: 0 }, 'a')).toMatchObject({ hi: 4, give: 6 });
  });

  it('within one of each other nothing moves, in either direction: no flapping', () => {
    for (const [held, me] of [
      [{ a: 2, b: 1 }, 'a'],
      [{ a: 2, b: 1 }, 'b'],
      [{ a: 2, b: 2 }, 'a'],
      [{ a: 2, b: 1, c: 1 }, 'a'],
      [{ a: 1, b: 0 }, 'a'],
    ] as const)
      expect(plan(held, me).give, JSON.stringify([held, me])).toBe(0);
  });

  it('a worker under floor(n / workers) gets one key from the richest only (ties: the smallest id)', () => {
    // 4 keys over 3 workers: 2, 2, 0 is within ceil for everyone, yet c holds less than floor.
    expect(plan({ a: 2, b: 2, c: 0 }, 'a').give).toBe(1);
    expect(plan({ a: 2, b: 2, c: 0 }, 'b').give).toBe(0);
    expect(plan({ a: 2, b: 2, c: 0 }, 'c').give).toBe(0);
  });

  it('a slack widens the band in which nothing moves', () => {
    expect(plan({ a: 3, b: 1 }, 'a', 0).give).toBe(1);
    expect(plan({ a: 3, b: 1 }, 'a', 1).give).toBe(0);
    // Past the band: back down to the share itself.
    expect(plan({ a: 5, b: 1 }, 'a', 1).give).toBe(2);
  });
});

/** A promise resolved from outside, to hold a hand-over at one of its steps. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => {
    open = r;
  });
  return { p, open };
}

describe.runIf(available)('LeaseKeeper: a newcomer gets its share by gradual hand-over', () => {
  let stores: Awaited<ReturnType<typeof twoStores>>;
  beforeEach(async () => {
    stores = await twoStores();
  });
  afterEach(async () => stores?.close());

  const giver = (
    store: Store,
    owner: string,
    keys: string[],
    o: {
      clock?: () => number;
      ttlMs?: number;
      group?: (key: string) => string;
      givePerRound?: (group: string) => number;
    } = {},
  ) => {
    const log: string[] = [];
    const steps = { drain: gate(), quiesce: gate() };
    let fenced: Record<string, number | undefined> = {};
    const k: LeaseKeeper = new LeaseKeeper(store.leases, {
      owner,
      ttlMs: o.ttlMs ?? 60_000,
      ...(o.clock ? { clock: o.clock } : {}),
      ...(o.group ? { group: o.group } : {}),
      ...(o.givePerRound ? { givePerRound: o.givePerRound } : {}),
      wanted: async () => keys,
      onAcquired: async (got) => {
        log.push(`+${got.join(',')}`);
      },
      onLost: async (lost) => {
        log.push(`-${lost.join(',')}`);
      },
      drain: async (given) => {
        log.push(`drain ${given.join(',')}`);
        await steps.drain.p;
      },
      quiesce: async (given) => {
        // Out of the fence before the last writes are waited for: nothing new leaves under them.
        fenced = Object.fromEntries(given.map((g) => [g, k.epochOf(g)]));
        log.push(`quiesce ${given.join(',')}`);
        await steps.quiesce.p;
      },
      onReleased: (given) => {
        log.push(`released ${given.join(',')}`);
      },
    });
    return { k, log, steps, fenced: () => fenced };
  };

  /** Resolves once `cond` holds, polling every 10 ms (at most 5 s). */
  const waitFor = async (cond: () => boolean) => {
    for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(cond()).toBe(true);
  };

  it('holds what it drains until no write is on the wire, then releases; the newcomer takes it; then nothing moves', async () => {
    const keys = ['account:r1', 'account:r2', 'account:r3', 'account:r4'];
    const w1 = giver(stores.a, 'w1', keys);
    const w2 = giver(stores.b, 'w2', keys);
    await w1.k.start();
    expect(w1.k.heldKeys()).toEqual(keys);
    // The newcomer announces itself; nothing is free yet.
    await w2.k.tick();
    expect(w2.k.heldKeys()).toEqual([]);
    expect((await stores.a.leases.get(presenceKey('w2')))?.owner).toBe('w2');
    // w1 sees two live workers: it gives two (the least wanted first: the role's giveOrder decides in a worker).
    await w1.k.tick();
    await waitFor(() => w1.log.includes('drain account:r4,account:r3'));
    // Draining: still held and fenced (the queued work finishes under the lease), nobody else can take them.
    expect(w1.k.epochOf('account:r4')).toBe(1);
    await w2.k.tick();
    expect(w2.k.heldKeys()).toEqual([]);
    w1.steps.drain.open();
    await waitFor(() => w1.log.some((l) => l.startsWith('quiesce')));
    expect(w1.fenced()).toEqual({ 'account:r4': undefined, 'account:r3': undefined });
    // Out of the fence, a write still on the wire: the store still says w1, renewals keep it so.
    await w1.k.tick();
    expect((await stores.a.leases.get('account:r4'))?.owner).toBe('w1');
    await w2.k.tick();
    expect(w2.k.heldKeys()).toEqual([]);
    w1.steps.quiesce.open();
    await waitFor(() => w1.log.includes('released account:r4,account:r3'));
    await w2.k.tick();
    await w2.k.stop();
    expect(w2.k.heldKeys().sort()).toEqual(['account:r3', 'account:r4']);
    expect(w2.k.epochOf('account:r3')).toBe(2);
    expect(w1.k.heldKeys()).toEqual(['account:r1', 'account:r2']);
    // Balanced: rounds on both sides move nothing more.
    for (let i = 0; i < 3; i++) {
      await w1.k.tick();
      await w2.k.tick();
    }
    expect(w1.log.filter((l) => l.startsWith('drain'))).toHaveLength(1);
    expect(w2.log.filter((l) => l.startsWith('drain'))).toHaveLength(0);
    expect(w1.k.heldKeys()).toEqual(['account:r1', 'account:r2']);
    expect(w2.k.heldKeys().sort()).toEqual(['account:r3', 'account:r4']);
    // SIGTERM of the newcomer: its leases and its presence go at once, w1 takes everything back in one round.
    await w2.k.releaseAll();
    await w1.k.tick();
    await w1.k.stop();
    expect(w1.k.heldKeys().sort()).toEqual(keys);
    await w1.k.releaseAll();
  });

  it('hands over per group, each at its own pace: two Masters a round, the cheap keys all at once', async () => {
    const masters = ['account:gm1', 'account:gm2', 'account:gm3', 'account:gm4', 'account:gm5', 'account:gm6'];
    const others = Array.from({ length: 12 }, (_, i) => `account:go${String(i).padStart(2, '0')}`);
    const group = (k: string) => (masters.includes(k) ? 'masters' : 'others');
    const o = { group, givePerRound: (g: string) => (g === 'masters' ? 2 : 500) };
    const w1 = giver(stores.a, 'g1', [...masters, ...others], o);
    w1.steps.drain.open();
    w1.steps.quiesce.open();
    await w1.k.tick();
    expect(w1.k.heldKeys()).toHaveLength(18);
    await stores.b.leases.acquire(presenceKey('g2'), 'g2', 60_000);
    await w1.k.tick();
    await waitFor(() => w1.log.some((l) => l.startsWith('released')));
    const released = w1.log
      .find((l) => l.startsWith('released'))!
      .slice('released '.length)
      .split(',');
    // One round: 2 of the 3 Masters above the share, and all 6 other keys above it.
    expect(released.filter((k) => masters.includes(k))).toHaveLength(2);
    expect(released.filter((k) => others.includes(k))).toHaveLength(6);
    expect(w1.log.filter((l) => l.startsWith('drain'))).toHaveLength(1);
    await w1.k.releaseAll();
  });

  it('a key handed over is not taken back by its giver at once, but is after a TTL if nobody took it (injected clock)', async () => {
    let now = 0;
    const keys = ['account:q1', 'account:q2'];
    const w1 = giver(stores.a, 'q1', keys, { clock: () => now, ttlMs: 10_000 });
    w1.steps.drain.open();
    w1.steps.quiesce.open();
    await w1.k.tick();
    // A second worker announces itself and then never takes anything (stuck, or gone before its next round).
    await stores.b.leases.acquire(presenceKey('q2'), 'q2', 10_000);
    await w1.k.tick();
    await waitFor(() => w1.log.includes('released account:q2'));
    now = 5_000;
    await w1.k.tick();
    expect(w1.k.heldKeys()).toEqual(['account:q1']);
    // A TTL later the key is still nobody's: covered again, whatever the share says.
    now = 10_001;
    await w1.k.tick();
    await w1.k.stop();
    expect(w1.k.heldKeys().sort()).toEqual(keys);
    await w1.k.releaseAll();
  });

  it('the presence row is renewed in the same statement as the leases, and withdrawn by releaseAll', async () => {
    const w = giver(stores.a, 'p1', ['account:p1']);
    await w.k.tick();
    const many = vi.spyOn(stores.a.leases, 'renewMany');
    try {
      await w.k.tick();
      expect(many).toHaveBeenCalledTimes(1);
      expect(many.mock.calls[0]![1].map((h) => h.key).sort()).toEqual(['account:p1', presenceKey('p1')]);
    } finally {
      many.mockRestore();
    }
    await w.k.stop();
    await w.k.releaseAll();
    expect((await stores.a.leases.live()).map((l) => l.key)).toEqual([]);
  });
});
