import type { Account } from '../domain/account.js';
import type { Store } from '../store/store.js';

export interface BreakerOptions {
  /** Most actions one Master may produce in a window; 0 switches the breaker off. */
  maxActions: number;
  windowMs: number;
}

export interface Trip {
  actions: number;
  windowMs: number;
  ceiling: number;
  reason: string;
}

/**
 * Per-Master circuit breaker over the actions the copy engine takes from it. A Master that produces more
 * than the ceiling in a sliding window (a copy loop, a runaway EA) trips it: the engine pauses copying from
 * it. In memory, per process: the process that watches a Master is the one that copies from it. A Master
 * seen copying again after a trip was resumed by its user, which starts a fresh window.
 */
export class MasterBreaker {
  private readonly hits = new Map<string, number[]>();
  private readonly tripped = new Set<string>();

  constructor(
    private readonly opts: BreakerOptions,
    private readonly clock: () => number,
  ) {}

  /** Counts one action of this Master; a Trip when it goes over the ceiling. */
  hit(master: Pick<Account, 'id' | 'status'>): Trip | null {
    const { maxActions, windowMs } = this.opts;
    if (maxActions <= 0) return null;
    // Only a Master that is copied from counts: a paused or locked one copies nothing that adds exposure.
    if (master.status !== 'connected' && master.status !== 'disconnected') return null;
    if (this.tripped.delete(master.id)) this.hits.delete(master.id);
    const now = this.clock();
    const recent = (this.hits.get(master.id) ?? []).filter((t) => t > now - windowMs);
    recent.push(now);
    this.hits.set(master.id, recent);
    if (recent.length <= maxActions) return null;
    this.tripped.add(master.id);
    const secs = Math.round(windowMs / 1000);
    return {
      actions: recent.length,
      windowMs,
      ceiling: maxActions,
      reason: `circuit breaker: ${recent.length} actions in ${secs} s, over the ceiling of ${maxActions}; copying from this Master is paused until it is resumed`,
    };
  }
}

/** A tripped Master is paused (status, reason and events, once) and copied from as paused from now on. */
export async function pauseTripped(store: Store, master: Account, trip: Trip): Promise<Account> {
  const { reason } = trip;
  if (await store.accounts.setStatusIf(master.id, master.status, 'paused', reason)) {
    await store.events.emit([
      {
        userId: master.userId,
        accountId: master.id,
        type: 'account.circuit_breaker_tripped',
        payload: { actions: trip.actions, windowMs: trip.windowMs, ceiling: trip.ceiling, reason },
      },
      {
        userId: master.userId,
        accountId: master.id,
        type: 'account.status_changed',
        payload: { before: master.status, after: 'paused', reason },
      },
    ]);
  }
  return { ...master, status: 'paused', statusReason: reason };
}
