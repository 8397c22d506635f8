import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { newId } from '../../src/domain/ids.js';
import { dec } from '../../src/domain/decimal.js';
import { intentRow, tradeRow } from '../helpers/store-seed.js';
import { accountLeaseKey, StaleLeaseError, type Fence } from '../../src/domain/lease.js';
import { requirePostgres } from '../helpers/postgres.js';
import { twoStores } from '../helpers/two-stores.js';
import { emptyReport } from '../../src/domain/panic-job.js';

const available = await requirePostgres();

/** A fence holding exactly the given epochs, as a worker's lease keeper would. */
const fenceOf = (owner: string, epochs: Record<string, number>): Fence => ({
  owner,
  epochOf: (key) => epochs[key],
});

// Two Store objects on one database stand for two worker processes. Expiry without waiting: a lease taken or
// renewed with a TTL of 0 is expired from the next statement on (the database's clock moves on between them).
describe.runIf(available)('leases with fencing on PostgreSQL', () => {
  let a: Store;
  let b: Store;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ a, b, close } = await twoStores());
  });
  afterAll(async () => close?.());

  it('grants a key to one owner at a time; the other gets it only once it expired, at the next epoch', async () => {
    const key = `account:${newId('acc')}`;
    const first = await a.leases.acquire(key, 'w1', 60_000);
    expect(first).toMatchObject({ key, owner: 'w1', epoch: 1 });
    expect(await b.leases.acquire(key, 'w2', 60_000)).toBeNull();
    expect(await b.leases.renew(key, 'w2', 1, 60_000)).toBeNull();
    expect((await a.leases.renew(key, 'w1', 1, 60_000))?.epoch).toBe(1);

    // w1 stops renewing: its last renewal had no time left.
    expect(await a.leases.renew(key, 'w1', 1, 0)).not.toBeNull();
    const taken = await b.leases.acquire(key, 'w2', 60_000);
    expect(taken).toMatchObject({ owner: 'w2', epoch: 2 });
    // The paused owner comes back: its renewal fails, so it knows it lost the lease.
    expect(await a.leases.renew(key, 'w1', 1, 60_000)).toBeNull();
    expect(await a.leases.release(key, 'w1', 1)).toBe(false);
    expect(await a.leases.get(key)).toMatchObject({ owner: 'w2', epoch: 2 });
  });

  it('renews many leases of one owner in one statement: only those still held at their epoch come back', async () => {
    const [k1, k2, k3] = [1, 2, 3].map(() => `account:${newId('acc')}`) as [string, string, string];
    for (const k of [k1, k2, k3]) expect(await a.leases.acquire(k, 'r1', 60_000)).toMatchObject({ epoch: 1 });
    // k2 ran out and was taken over; k3 is asked at a wrong epoch.
    await a.leases.renew(k2, 'r1', 1, 0);
    expect(await b.leases.acquire(k2, 'r2', 60_000)).toMatchObject({ owner: 'r2', epoch: 2 });
    expect(await a.leases.renewMany('r1', [], 60_000)).toEqual([]);
    const renewed = await a.leases.renewMany(
      'r1',
      [
        { key: k1, epoch: 1 },
        { key: k2, epoch: 1 },
        { key: k3, epoch: 7 },
      ],
      60_000,
    );
    expect(renewed.map((l) => [l.key, l.owner, l.epoch])).toEqual([[k1, 'r1', 1]]);
    expect(renewed[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 30_000);
    expect(await a.leases.get(k2)).toMatchObject({ owner: 'r2', epoch: 2 });
  });

  it('a release hands the key over at once, and the epoch keeps growing', async () => {
    const key = `ctrader:${newId('acc')}`;
    const l = (await a.leases.acquire(key, 'w1', 60_000))!;
    expect(await a.leases.release(key, 'w1', l.epoch)).toBe(true);
    expect((await a.leases.live()).map((x) => x.key)).not.toContain(key);
    expect(await b.leases.acquire(key, 'w2', 60_000)).toMatchObject({ owner: 'w2', epoch: 2 });
    expect((await b.leases.live()).find((x) => x.key === key)?.owner).toBe('w2');
  });

  it('refuses ledger writes fenced by a stale epoch, and writes nothing of them', async () => {
    const u = await a.users.create(`${newId('usr')}@example.test`, 'scrypt$hash');
    const acc = (role: 'master' | 'slave', n: string) =>
      a.accounts.create({
        userId: u.id,
        platform: 'sim',
        role,
        name: n,
        brokerAccountId: newId('acc'),
        brokerAccountNumber: n,
      });
    const m = await acc('master', '1');
    const s = await acc('slave', '2');
    const key = accountLeaseKey(m.id);
    const trade = (status: string) => tradeRow(u.id, m.id, { actionId: newId('act'), status });
    const intent = (tradeId: string) => intentRow(tradeId, s.id);

    // Not held at all: refused.
    a.trades.fence = fenceOf('w1', {});
    const t0 = trade('recorded');
    await expect(a.trades.recordAction(t0, [intent(t0.id)], [])).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await a.trades.tradeById(t0.id)).toBeNull();

    const l1 = (await a.leases.acquire(key, 'w1', 0))!;
    a.trades.fence = fenceOf('w1', { [key]: l1.epoch });
    const t1 = trade('recorded');
    const i1 = intent(t1.id);
    expect(await a.trades.recordAction(t1, [i1], [])).toBe(true);

    // w1 is paused past its lease; w2 takes over at the next epoch.
    const l2 = (await b.leases.acquire(key, 'w2', 60_000))!;
    expect(l2.epoch).toBe(l1.epoch + 1);
    b.trades.fence = fenceOf('w2', { [key]: l2.epoch });

    // w1 wakes up and writes what it had in hand: every ledger write is refused.
    await expect(
      a.trades.applyOutcomes([{ intentId: i1.id, update: { state: 'confirmed', brokerPositionId: 'p1' } }]),
    ).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(a.trades.updateIntent(i1.id, { state: 'unresolved' })).rejects.toBeInstanceOf(StaleLeaseError);
    const t2 = trade('recorded');
    await expect(a.trades.recordAction(t2, [intent(t2.id)], [])).rejects.toBeInstanceOf(StaleLeaseError);
    const t3 = await a.trades.insertTrade(trade('pending'));
    await expect(a.trades.recordIntents(t3.id, { status: 'accepted' }, [intent(t3.id)])).rejects.toThrow(
      /stale lease account:/,
    );
    expect(await a.trades.tradeById(t2.id)).toBeNull();
    expect((await a.trades.tradeById(t3.id))?.status).toBe('pending');
    expect((await a.trades.intentById(i1.id))?.state).toBe('planned');

    // The successor's writes go through.
    await b.trades.applyOutcomes([{ intentId: i1.id, update: { state: 'confirmed', brokerPositionId: 'p1' } }]);
    expect((await b.trades.intentById(i1.id))?.state).toBe('confirmed');
    expect(await b.trades.recordIntents(t3.id, { status: 'accepted' }, [intent(t3.id)])).toBe(true);
    a.trades.fence = null;
    b.trades.fence = null;
  });

  it("refuses a panic-close job save fenced by a stale epoch of the jobs' lease; the successor's save stands", async () => {
    const u = await a.users.create(`${newId('usr')}@example.test`, 'scrypt$hash');
    const key = `scheduled:${newId('job')}`;
    const progress = (remaining: number) => ({
      maxRounds: 5,
      reason: 'manual',
      accounts: [{ ...emptyReport('acc_x'), remaining }],
    });
    const job = await a.panicJobs.create(
      {
        id: newId('job'),
        userId: u.id,
        scope: 'account',
        targetId: 'acc_x',
        cancelPending: false,
        progress: progress(9),
      },
      [],
    );
    expect(await a.leases.acquire(key, 'p1', 0)).toMatchObject({ epoch: 1 });
    expect(await b.leases.acquire(key, 'p2', 60_000)).toMatchObject({ owner: 'p2', epoch: 2 });
    const aJobs = a.panicJobs;
    const bJobs = b.panicJobs;
    try {
      // p1 was paused past its lease; p2 took the jobs over and saved its progress.
      aJobs.fence = { fence: fenceOf('p1', { [key]: 1 }), key };
      bJobs.fence = { fence: fenceOf('p2', { [key]: 2 }), key };
      await bJobs.update(job.id, { progress: progress(3) });
      // p1 wakes and saves its older view (and a conclusion): refused, nothing of it written.
      await expect(
        aJobs.update(job.id, { progress: progress(7), state: 'failed', finishedAt: new Date() }),
      ).rejects.toBeInstanceOf(StaleLeaseError);
      const now = await a.panicJobs.owned(u.id, job.id);
      expect(now?.state).toBe('running');
      expect(now?.progress.accounts[0]?.remaining).toBe(3);
      // A process holding no epoch of the key (never took it) is refused too.
      aJobs.fence = { fence: fenceOf('p1', {}), key };
      await expect(aJobs.update(job.id, { progress: progress(1) })).rejects.toBeInstanceOf(StaleLeaseError);
      await bJobs.update(job.id, { progress: progress(0), state: 'succeeded', finishedAt: new Date() });
      expect((await a.panicJobs.owned(u.id, job.id))?.state).toBe('succeeded');
    } finally {
      aJobs.fence = null;
      bJobs.fence = null;
    }
  });

  it('takes many keys in one statement: new, expired and its own ones, never one another owner holds', async () => {
    const [fresh, expired, mine, theirs] = [1, 2, 3, 4].map(() => `account:${newId('acc')}`) as [
      string,
      string,
      string,
      string,
    ];
    await b.leases.acquire(expired, 'm2', 0);
    await a.leases.acquire(mine, 'm1', 60_000);
    await b.leases.acquire(theirs, 'm2', 60_000);
    const got = await a.leases.acquireMany([fresh, expired, mine, theirs, fresh], 'm1', 60_000);
    expect(got.map((l) => [l.key, l.owner, l.epoch]).sort()).toEqual(
      [
        [fresh, 'm1', 1],
        [expired, 'm1', 2],
        [mine, 'm1', 2],
      ].sort(),
    );
    expect(await a.leases.get(theirs)).toMatchObject({ owner: 'm2', epoch: 1 });
    expect(await a.leases.acquireMany([], 'm1', 60_000)).toEqual([]);
  });

  it('a key whose row a fenced write holds locked is skipped, not waited for; the others are taken', async () => {
    const [busy, idle] = [1, 2].map(() => `account:${newId('acc')}`) as [string, string];
    await b.leases.acquire(busy, 'x2', 0);
    await b.leases.acquire(idle, 'x2', 0);
    let locked!: () => void;
    let finish!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const writing = b.database.db.transaction(async (tx) => {
      await tx.execute(sql`select key from leases where key = ${busy} for share`);
      locked();
      await new Promise<void>((r) => {
        finish = r;
      });
    });
    await isLocked;
    try {
      const got = await a.leases.acquireMany([busy, idle], 'x1', 60_000);
      expect(got.map((l) => l.key)).toEqual([idle]);
    } finally {
      finish();
      await writing;
    }
    expect((await a.leases.acquireMany([busy], 'x1', 60_000)).map((l) => [l.key, l.epoch])).toEqual([[busy, 2]]);
  });

  it('two owners racing for one free key: exactly one wins', async () => {
    const key = `account:${newId('acc')}`;
    const got = await Promise.all([a.leases.acquire(key, 'w1', 60_000), b.leases.acquire(key, 'w2', 60_000)]);
    expect(got.filter((g) => g !== null)).toHaveLength(1);
  });
});
