import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Lease, LeasesRepo } from '../store/repos/leases.js';
import { LeaseKeeper, presenceKey } from './lease-keeper.js';

/**
 * An in-memory lease table on the (faked) wall clock, standing in for the store: expiry, owners, epochs, and a
 * renewal statement that takes `renewDelayMs` to answer (a loaded store).
 */
class FakeLeases {
  rows = new Map<string, { owner: string; epoch: number; expiresAt: number }>();
  renewDelayMs = 0;
  renewals = 0;

  private take(key: string, owner: string, ttlMs: number): Lease | null {
    const now = Date.now();
    const row = this.rows.get(key);
    if (row && row.expiresAt > now && row.owner !== owner) return null;
    const next = { owner, epoch: (row?.epoch ?? 0) + 1, expiresAt: now + ttlMs };
    this.rows.set(key, next);
    return { key, owner, epoch: next.epoch, expiresAt: new Date(next.expiresAt) };
  }

  async acquire(key: string, owner: string, ttlMs: number) {
    return this.take(key, owner, ttlMs);
  }
  async acquireMany(keys: string[], owner: string, ttlMs: number) {
    return keys.map((k) => this.take(k, owner, ttlMs)).filter((l): l is Lease => l !== null);
  }
  async renewMany(owner: string, held: Array<{ key: string; epoch: number }>, ttlMs: number) {
    this.renewals++;
    if (this.renewDelayMs > 0) await new Promise((r) => setTimeout(r, this.renewDelayMs));
    const out: Lease[] = [];
    for (const h of held) {
      const row = this.rows.get(h.key);
      if (!row || row.owner !== owner || row.epoch !== h.epoch) continue;
      // Extended as of when the statement ran (its start here: the conservative end for the keeper's check).
      row.expiresAt = Date.now() - this.renewDelayMs + ttlMs;
      out.push({ key: h.key, owner, epoch: row.epoch, expiresAt: new Date(row.expiresAt) });
    }
    return out;
  }
  async live() {
    const now = Date.now();
    return [...this.rows]
      .filter(([, r]) => r.expiresAt > now)
      .map(([key, r]) => ({
        key,
        owner: r.owner,
        epoch: r.epoch,
        expiresAt: new Date(r.expiresAt),
        remainingMs: r.expiresAt - now,
      }));
  }
  async prune() {
    return 0;
  }
  async release() {
    return true;
  }
  async releaseMany() {
    return [];
  }
}

describe('LeaseKeeper timing (injected clock, in-memory leases)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const keeperOn = (repo: FakeLeases, owner: string, keys: string[], acquired: string[] = []) =>
    new LeaseKeeper(repo as unknown as LeasesRepo, {
      owner,
      ttlMs: 4000,
      renewMs: 1000,
      clock: () => Date.now(),
      wanted: async () => keys,
      onAcquired: async (got) => {
        acquired.push(...got);
      },
      onLost: async () => undefined,
    });

  it('a renewal that answers late under load does not close the write gate while the lease has time left', async () => {
    const repo = new FakeLeases();
    const k = keeperOn(repo, 'w1', ['account:m1']);
    await k.start();
    expect(k.mayWrite('account:m1')).toBe(true);
    // Every renewal now takes 2 s to answer. Sent 1 s after the last one ended, the next one answered 4 s after
    // the last one was sent: the gate (closed with 0.8 s of the 4 s left) stayed shut 1.8 s each time.
    repo.renewDelayMs = 2000;
    const closedAt: number[] = [];
    for (let t = 0; t < 15_000; t += 50) {
      await vi.advanceTimersByTimeAsync(50);
      if (!k.mayWrite('account:m1')) closedAt.push(t);
    }
    expect(closedAt).toEqual([]);
    expect(k.holds('account:m1')).toBe(true);
    // One statement a second whatever each costs: they do not pile up.
    expect(repo.renewals).toBeLessThanOrEqual(17);
    const stopped = k.stop();
    await vi.advanceTimersByTimeAsync(repo.renewDelayMs);
    await stopped;
  });

  it("another worker's keys are taken right when its presence runs out, not at the next round", async () => {
    const repo = new FakeLeases();
    const keys = ['account:m1', 'account:s1'];
    // A worker that held both keys and was killed: its presence and its leases run out together, in 3.3 s.
    for (const key of [...keys, presenceKey('dead')])
      repo.rows.set(key, { owner: 'dead', epoch: 1, expiresAt: Date.now() + 3300 });
    const acquired: string[] = [];
    const k = keeperOn(repo, 'w2', keys, acquired);
    await k.start();
    expect(k.heldKeys()).toEqual([]);
    // Rounds run every second (at 1 s, 2 s, 3 s, then 4 s): the one due after the expiry would come 0.7 s late.
    await vi.advanceTimersByTimeAsync(3300 + 100);
    expect(k.heldKeys()).toEqual(keys);
    expect(acquired).toEqual(keys);
    expect(repo.rows.get('account:m1')).toMatchObject({ owner: 'w2', epoch: 2 });
    await k.stop();
  });

  it('a live worker whose renewals keep its presence on costs no extra round', async () => {
    const repo = new FakeLeases();
    const other = keeperOn(repo, 'w1', ['account:m1']);
    await other.start();
    const live = vi.spyOn(repo, 'live');
    const k = keeperOn(repo, 'w2', ['account:m1']);
    await k.start();
    const before = live.mock.calls.length;
    await vi.advanceTimersByTimeAsync(10_000);
    // Two keepers, a round each per second: nothing more although each sees the other's presence run out soon.
    expect(live.mock.calls.length - before).toBeLessThanOrEqual(21);
    expect(k.heldKeys()).toEqual([]);
    expect(other.heldKeys()).toEqual(['account:m1']);
    await Promise.all([k.stop(), other.stop()]);
  });
});
