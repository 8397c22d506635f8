import { type Account, isEligibleSlave } from '../domain/account.js';
import { AppError } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { CopyEngine } from './copy-engine.js';
import { groupSlaves } from './group-slaves.js';

/**
 * Admission control for the order route (docs/architecture.md, "Admission control"; an open point). A copy
 * that waits longer than its rule's `maxDelayMs` is never sent (stale), so an order the Slaves' connections
 * cannot carry in time must be refused at the door, not accepted and lost.
 *
 * For each eligible Slave, with `r` the writes per second its connection drains at (the pacer's figure, or the
 * measured one when lower):
 *
 *   work   = queued + retrying + RESEND_COST * unsettled + 1      (the new order's copy)
 *   wait   = held + SAFETY * work / r
 *   budget = maxDelayMs, less the age of the oldest still-fresh unsettled copy
 *   refuse when wait > budget; Retry-After = the excess, its part past `held` divided by SAFETY, at least 1 s
 *
 * queued: writes handed to the dispatcher and not answered; retrying: copies waiting to be sent again after a
 * refusal their broker said to retry (a 429); held: how long until the latest of those waits ends (the broker
 * asked us to wait, and the new copy would be refused too before then); unsettled: copies whose outcome is
 * unknown and not on the wire (the settle loop owes each a lookup and maybe a resend, which queues behind the new
 * copy).
 */
const SAFETY = 2;
const RESEND_COST = 2;

export interface SlaveBacklog {
  accountId: string;
  name: string;
  maxDelayMs: number;
  queued: number;
  /** Fresh copies (younger than maxDelayMs) whose outcome is unknown and that wait for the settle loop. */
  unsettled: number;
  /** Age (ms) of the oldest of those, null when none. */
  oldestUnsettledMs: number | null;
  ratePerSec: number;
  /** Copies waiting out a refusal their broker said to retry (engine.retrying); 0 when absent. */
  retrying?: number;
  /** Until the latest of those waits ends (ms); 0 when absent. */
  heldForMs?: number;
}

interface Backlogged {
  accountId: string;
  name: string;
  queuedWrites: number;
  unsettledWrites: number;
  retryingWrites: number;
  heldForMs: number;
  writesPerSec: number;
  estimatedWaitMs: number;
  budgetMs: number;
  retryAfterSec: number;
}

/** Pure: null when the Slave can take one more copy in time, else why not. */
export function assess(b: SlaveBacklog, safety = SAFETY): Backlogged | null {
  const rate = Math.max(b.ratePerSec, 1e-3);
  // A rule so strict that even an idle connection misses it cannot be helped by refusing: that would stop the Master for good.
  if ((safety * 1000) / rate > b.maxDelayMs) return null;
  const retrying = b.retrying ?? 0;
  const heldMs = b.heldForMs ?? 0;
  const work = b.queued + retrying + RESEND_COST * b.unsettled + 1;
  const waitMs = heldMs + (safety * work * 1000) / rate;
  const budgetMs = b.maxDelayMs - (b.oldestUnsettledMs ?? 0);
  if (waitMs <= budgetMs) return null;
  // The broker's hold passes with the clock; only the queue's part of the excess drains at the doubled estimate.
  const excessMs = waitMs - budgetMs;
  const clearsInMs = Math.min(excessMs, heldMs) + Math.max(0, excessMs - heldMs) / safety;
  return {
    accountId: b.accountId,
    name: b.name,
    queuedWrites: b.queued,
    unsettledWrites: b.unsettled,
    retryingWrites: retrying,
    heldForMs: Math.round(heldMs),
    writesPerSec: Math.round(rate * 100) / 100,
    estimatedWaitMs: Math.round(waitMs),
    budgetMs: Math.max(0, Math.round(budgetMs)),
    retryAfterSec: Math.max(1, Math.ceil(clearsInMs / 1000)),
  };
}

/** The 429 an order gets while one of its Slaves is backlogged (the api maps the code; Retry-After in seconds). */
export function backloggedError(list: Backlogged[]): AppError {
  const retryAfter = Math.max(...list.map((b) => b.retryAfterSec));
  const who = list
    .map(
      (b) =>
        `"${b.name}" (${b.accountId}): ~${Math.ceil(b.estimatedWaitMs / 1000)} s of writes queued at ${b.writesPerSec}/s${b.heldForMs > 0 ? ` (its broker asked to wait ${Math.ceil(b.heldForMs / 1000)} s more)` : ''}, its rule allows ${Math.floor(b.budgetMs / 1000)} s`,
    )
    .join('; ');
  return new AppError(
    'slaves_backlogged',
    `not accepted: a copy of this order would go stale before it could be sent; backlogged Slave${list.length > 1 ? 's' : ''}: ${who}; retry in ${retryAfter} s`,
    { retryable: true, retryAfter, details: { retryAfter, slaves: list } },
  );
}

/** How long a read of the unsettled copies serves a burst of orders (the queues themselves are read live). */
const UNSETTLED_TTL_MS = 250;

export class Admission {
  private unsettled: { at: number; rows: Promise<Array<{ intent: CopyIntent; trade: Trade }>> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly engine: CopyEngine,
  ) {}

  /** Throws 429 slaves_backlogged when one more order would make an eligible Slave's copy go stale. */
  async admit(master: Account): Promise<void> {
    const slaves = (await groupSlaves(this.store, this.adapters, master)).filter(
      (s) => s.adapter !== null && isEligibleSlave(s.account),
    );
    if (slaves.length === 0) return;
    const now = this.engine.clock();
    const rows = await this.unsettledRows();
    const refused: Backlogged[] = [];
    for (const s of slaves) {
      const ages = rows
        .filter((r) => r.intent.slaveAccountId === s.account.id && !this.engine.claims.holdsIntent(r.intent.id))
        .map((r) => now - (r.trade.actionAt ?? r.trade.createdAt).getTime())
        .filter((age) => age < s.rule.maxDelayMs);
      const { queued, ratePerSec } = this.engine.dispatcher.load(s.account.id, s.adapter!);
      const { waiting, heldForMs } = this.engine.retrying.of(s.account.id, now);
      const verdict = assess({
        accountId: s.account.id,
        name: s.account.name,
        maxDelayMs: s.rule.maxDelayMs,
        queued,
        unsettled: ages.length,
        oldestUnsettledMs: ages.length > 0 ? Math.max(...ages) : null,
        ratePerSec,
        retrying: waiting,
        heldForMs,
      });
      if (verdict) refused.push(verdict);
    }
    if (refused.length > 0) throw backloggedError(refused);
  }

  private unsettledRows(): Promise<Array<{ intent: CopyIntent; trade: Trade }>> {
    const t = performance.now();
    if (!this.unsettled || t - this.unsettled.at > UNSETTLED_TTL_MS) {
      this.unsettled = { at: t, rows: this.store.trades.unsettledIntents() };
      this.unsettled.rows.catch(() => (this.unsettled = null));
    }
    return this.unsettled.rows;
  }
}
