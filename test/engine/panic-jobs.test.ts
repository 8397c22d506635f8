import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PanicJob } from '../../src/domain/panic-job.js';
import { PanicCloseService } from '../../src/engine/panic-close.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';
import { engineHarness, type EngineHarness } from './harness.js';

const FAST = { maxRounds: 4, backoffMs: 20, maxBackoffMs: 100, settleMs: 150 };

let h: EngineHarness;
let panic: PanicCloseService;

beforeAll(async () => {
  h = await engineHarness({ timeoutMs: 300 });
  panic = new PanicCloseService(h.store, h.adapters, h.dispatcher, FAST);
});
afterAll(async () => {
  await panic?.stop();
  await h?.close();
});

const finished = async (job: PanicJob) => panic.wait(job, 15_000);
/** Closing deals the broker made for one position: more than one would be a double close. */
const closes = (simId: string, positionId: string) =>
  h.broker.deals(simId).filter((d) => d.positionId === positionId && d.entry === 'out').length;
const eventsOf = async (type: string, jobId: string) =>
  (await h.store.events.after(h.userId, 0, 10_000)).filter(
    (e) => e.type === type && (e.payload as { jobId?: string }).jobId === jobId,
  );

describe('panic-close job', () => {
  it('progress and per-position results are readable while it runs, and it ends flat', async () => {
    const acc = await h.account();
    h.open(acc, 3);
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'delay',
      delayMs: 250,
      accountId: acc.brokerAccountId,
      times: 3,
    });
    const job = await panic.start(h.userId, 'account', acc.id);
    let seenRunning: PanicJob | null = null;
    for (let i = 0; i < 100 && !seenRunning; i++) {
      const j = (await panic.job(h.userId, job.id))!;
      if (j.state === 'running' && j.progress.accounts[0]!.positions.some((p) => p.outcome === 'closing'))
        seenRunning = j;
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(seenRunning?.progress.accounts[0]).toMatchObject({ state: 'running', round: 1 });
    const done = await finished(job);
    expect(done.state).toBe('succeeded');
    expect(done.progress.accounts[0]).toMatchObject({ state: 'flat', closed: 3, failed: 0, remaining: 0 });
    expect(h.broker.positions(acc.brokerAccountId)).toEqual([]);
    expect(await eventsOf('panic_close.started', job.id)).toHaveLength(1);
    expect(await eventsOf('panic_close.finished', job.id)).toHaveLength(1);
  });

  it('closed + remaining is the number of positions from the first read to the end (no double count while closes land)', async () => {
    const acc = await h.account();
    h.open(acc, 6);
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'delay',
      delayMs: 60,
      accountId: acc.brokerAccountId,
      times: 6,
    });
    const job = await panic.start(h.userId, 'account', acc.id);
    const sizes = new Set<number>();
    for (;;) {
      const j = (await panic.job(h.userId, job.id))!;
      const r = j.progress.accounts[0]!;
      if (r.round >= 1) sizes.add(r.closed + r.remaining);
      if (j.state !== 'running') break;
      await new Promise((res) => setTimeout(res, 5));
    }
    expect([...sizes]).toEqual([6]);
  });

  it('retries until flat after rejected closes, re-reading the broker each round', async () => {
    const acc = await h.account();
    h.open(acc, 3);
    h.broker.faults.inject({ op: 'closePosition', kind: 'reject', accountId: acc.brokerAccountId, times: 4 });
    const done = await finished(await panic.start(h.userId, 'account', acc.id));
    expect(done.state).toBe('succeeded');
    const r = done.progress.accounts[0]!;
    expect(r).toMatchObject({ state: 'flat', closed: 3, remaining: 0 });
    expect(r.round).toBeGreaterThanOrEqual(2);
    expect(r.positions.some((p) => p.attempts >= 2)).toBe(true);
    expect((await eventsOf('panic_close.progress', done.id)).length).toBeGreaterThanOrEqual(2);
  });

  it('settles an unresolved close by reading the position: never a second close of an applied one', async () => {
    const acc = await h.account();
    const [applied, lost] = h.open(acc, 2);
    // First close: applied at the broker but the answer is lost; second: lost before it was applied.
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'timeout_after_apply',
      accountId: acc.brokerAccountId,
      times: 1,
    });
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'timeout_before_apply',
      accountId: acc.brokerAccountId,
      times: 1,
    });
    const done = await finished(await panic.start(h.userId, 'account', acc.id));
    expect(done.state).toBe('succeeded');
    const byId = new Map(done.progress.accounts[0]!.positions.map((p) => [p.positionId, p]));
    const settledByRead = [...byId.values()].find((p) => p.settledBy === 'read')!;
    const resent = [...byId.values()].find((p) => p.settledBy === 'answer')!;
    expect(settledByRead).toMatchObject({ outcome: 'closed', attempts: 1 });
    expect(resent).toMatchObject({ outcome: 'closed', attempts: 2 });
    for (const id of [applied!, lost!]) expect(closes(acc.brokerAccountId, id)).toBe(1);
  });

  it('gives up after the last round with what is left, and keeps the account locked', async () => {
    const acc = await h.account();
    h.open(acc, 1);
    const fault = h.broker.faults.inject({
      op: 'closePosition',
      kind: 'reject',
      accountId: acc.brokerAccountId,
      times: 100,
    });
    const done = await finished(await panic.start(h.userId, 'account', acc.id));
    h.broker.faults.remove(fault);
    expect(done.state).toBe('failed');
    expect(done.error).toContain('not flat');
    // The broker's reason is in the job's error, not only in the position's result.
    expect(done.error).toContain(`${acc.id} has 1 position(s) open (close refused: rejected: rejected by the broker)`);
    expect(done.progress.accounts[0]).toMatchObject({ state: 'failed', remaining: 1, round: FAST.maxRounds });
    expect((await h.store.accounts.byId(acc.id))!.status).toBe('locked');
  });

  it('cancels pending orders unless told not to', async () => {
    const acc = await h.account();
    const ask = h.broker.quote('EURUSD').ask;
    const place = () =>
      h.broker.placeOrder(acc.brokerAccountId, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'limit',
        price: ask.minus('0.0100'),
        volume: h.broker.instrument('EURUSD')!.minVolume,
        tag: `p${Math.random()}`,
      });
    place();
    const kept = await finished(await panic.start(h.userId, 'account', acc.id, { cancelPending: false }));
    expect(kept.state).toBe('succeeded');
    expect(h.broker.orders(acc.brokerAccountId)).toHaveLength(1);
    const done = await finished(await panic.start(h.userId, 'account', acc.id));
    expect(done.progress.accounts[0]).toMatchObject({ state: 'flat', cancelled: 1, remainingOrders: 0 });
    expect(h.broker.orders(acc.brokerAccountId)).toHaveLength(0);
  });

  it('locks copying until resumed, with a reason naming the job', async () => {
    const acc = await h.account();
    h.open(acc, 1);
    const job = await panic.start(h.userId, 'account', acc.id);
    const locked = (await h.store.accounts.byId(acc.id))!;
    expect(locked).toMatchObject({ status: 'locked', statusReason: expect.stringContaining(job.id) });
    await finished(job);
    expect((await h.store.accounts.byId(acc.id))!.status).toBe('locked');
    const changed = (await h.store.events.after(h.userId, 0, 10_000)).filter(
      (e) => e.type === 'account.status_changed' && e.accountId === acc.id,
    );
    expect(changed.at(-1)?.payload).toMatchObject({ before: 'connected', after: 'locked' });
  });

  it('a second start while one runs joins it instead of racing it', async () => {
    const acc = await h.account();
    h.open(acc, 1);
    h.broker.faults.inject({ op: 'closePosition', kind: 'delay', delayMs: 200, accountId: acc.brokerAccountId });
    const a = await panic.start(h.userId, 'account', acc.id);
    const b = await panic.start(h.userId, 'account', acc.id);
    expect(b.id).toBe(a.id);
    expect((await finished(a)).state).toBe('succeeded');
  });

  it('a group job flattens and locks every member', async () => {
    const group = await h.store.accounts.createGroup(h.userId, 'g');
    const members = [
      await h.account({ role: 'master', groupId: group.id }),
      await h.account({ groupId: group.id }),
      await h.account({ groupId: group.id }),
    ];
    for (const m of members) h.open(m, 2);
    const done = await finished(await panic.start(h.userId, 'group', group.id));
    expect(done).toMatchObject({ scope: 'group', targetId: group.id, state: 'succeeded' });
    expect(done.progress.accounts.map((r) => r.accountId).sort()).toEqual(members.map((m) => m.id).sort());
    for (const m of members) {
      expect(h.broker.positions(m.brokerAccountId)).toEqual([]);
      expect((await h.store.accounts.byId(m.id))!.status).toBe('locked');
    }
    expect(await eventsOf('panic_close.finished', done.id)).toHaveLength(3);
  });

  it("a rate-limit refusal is sent again after the broker's retry hint, within the same round", async () => {
    const acc = await h.account();
    h.open(acc, 3);
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'rate_limit',
      retryAfterSec: 0.05,
      accountId: acc.brokerAccountId,
      times: 4,
    });
    const one = new PanicCloseService(h.store, h.adapters, h.dispatcher, { ...FAST, maxRounds: 1 });
    const done = await one.wait(await one.start(h.userId, 'account', acc.id), 15_000);
    await one.stop();
    expect(done.error).toBeNull();
    expect(done.state).toBe('succeeded');
    const r = done.progress.accounts[0]!;
    expect(r).toMatchObject({ state: 'flat', round: 1, closed: 3, remaining: 0 });
    expect(r.positions.reduce((n, p) => n + p.attempts, 0)).toBe(3 + 4);
    expect(h.broker.positions(acc.brokerAccountId)).toEqual([]);
  });

  it('a close refused for the rate limit again and again fails the round instead of waiting forever', async () => {
    const acc = await h.account();
    h.open(acc, 1);
    const fault = h.broker.faults.inject({
      op: 'closePosition',
      kind: 'rate_limit',
      retryAfterSec: 0.01,
      accountId: acc.brokerAccountId,
      times: 1000,
    });
    const one = new PanicCloseService(h.store, h.adapters, h.dispatcher, {
      ...FAST,
      maxRounds: 1,
      rateLimitRetries: 3,
    });
    const done = await one.wait(await one.start(h.userId, 'account', acc.id), 15_000);
    await one.stop();
    h.broker.faults.remove(fault);
    expect(done.state).toBe('failed');
    expect(done.progress.accounts[0]!.positions[0]).toMatchObject({
      outcome: 'failed',
      attempts: 4,
      error: expect.stringContaining('rate_limited'),
    });
  });

  it('"flat" needs a fresh read of every account after the last one is done: a position that appeared meanwhile is closed too', async () => {
    const group = await h.store.accounts.createGroup(h.userId, 'late');
    const quick = await h.account({ groupId: group.id });
    const slow = await h.account({ groupId: group.id });
    h.open(quick, 1);
    h.open(slow, 1);
    h.broker.faults.inject({
      op: 'closePosition',
      kind: 'delay',
      delayMs: 300,
      accountId: slow.brokerAccountId,
      times: 1,
    });
    const job = await panic.start(h.userId, 'group', group.id);
    await expect
      .poll(async () => (await panic.wait(job, 0)).progress.accounts.find((r) => r.accountId === quick.id)?.state, {
        timeout: 5000,
        interval: 5,
      })
      .toBe('flat');
    // Lands after the quick account read flat, while the slow one is still closing (a copy, a manual trade).
    const late = h.open(quick, 1)[0]!;
    const done = await finished(job);
    expect(done.state).toBe('succeeded');
    expect(h.broker.positions(quick.brokerAccountId)).toEqual([]);
    expect(
      done.progress.accounts.find((r) => r.accountId === quick.id)!.positions.find((p) => p.positionId === late),
    ).toMatchObject({ outcome: 'closed' });
  });

  it('saves progress a bounded number of times, not once per position answer', async () => {
    const acc = await h.account({ balance: 1_000_000 });
    h.open(acc, 200, 'EURUSD', '0.01');
    const spy = vi.spyOn(panic.jobs, 'update');
    const done = await finished(await panic.start(h.userId, 'account', acc.id));
    const saves = spy.mock.calls.length;
    spy.mockRestore();
    expect(done.state).toBe('succeeded');
    expect(done.progress.accounts[0]).toMatchObject({ closed: 200, remaining: 0 });
    expect(saves).toBeLessThan(40);
    const closedEvents = (await h.store.events.after(h.userId, 0, 10_000)).filter(
      (e) => e.type === 'position.closed' && e.accountId === acc.id,
    );
    expect(closedEvents).toHaveLength(200);
  });

  it('unknown and foreign targets are not found', async () => {
    await expect(panic.start(h.userId, 'account', 'acc_nope')).rejects.toMatchObject({ code: 'not_found' });
    const other = (await h.store.users.create('other-panic@example.test', 'h')).id;
    const acc = await h.account();
    await expect(panic.start(other, 'account', acc.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await panic.job(other, (await panic.start(h.userId, 'account', acc.id)).id)).toBeNull();
  });
});

describe('panic-close job across a restart', () => {
  it('a job found running at start is resumed and finishes flat', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-panic-'));
    const broker = new SimBroker();
    try {
      let store = await Store.open({ dataDir: dir, embeddedFsync: false });
      const first = await engineHarness({ store, broker, timeoutMs: 300 });
      const acc = await first.account();
      first.open(acc, 2);
      const fault = broker.faults.inject({
        op: 'closePosition',
        kind: 'reject',
        accountId: acc.brokerAccountId,
        times: 1000,
      });
      const before = new PanicCloseService(store, first.adapters, first.dispatcher, { ...FAST, maxRounds: 100 });
      const job = await before.start(first.userId, 'account', acc.id);
      // Stopped only once both closes were refused at least once, so the restart lands mid-job, not before it began.
      const refused = () => 1000 - (broker.faults.list().find((f) => f.id === fault)?.remaining ?? 0);
      await expect.poll(refused, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      await before.stop();
      await first.close();
      await store.close();
      expect(broker.positions(acc.brokerAccountId)).toHaveLength(2);

      broker.faults.remove(fault);
      store = await Store.open({ dataDir: dir, embeddedFsync: false });
      const second = await engineHarness({ store, broker, userId: first.userId, timeoutMs: 300 });
      const after = new PanicCloseService(store, second.adapters, second.dispatcher, FAST);
      expect((await after.jobs.owned(first.userId, job.id))!.state).toBe('running');
      expect(await after.resumeRunning()).toBe(1);
      const done = await after.wait(job, 15_000);
      expect(done.state).toBe('succeeded');
      expect(broker.positions(acc.brokerAccountId)).toEqual([]);
      await after.stop();
      await second.close();
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
