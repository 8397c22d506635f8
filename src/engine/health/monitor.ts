import { type Account, keepsItsStatus } from '../../domain/account.js';
import { AppError } from '../../domain/errors.js';
import type { AccountStatus, Health } from '../../domain/types.js';
import type { Store } from '../../store/store.js';
import type { EquitySnapshot } from '../../store/repos/equity.js';
import type { HealthWrite } from '../../store/repos/accounts.js';
import type { AdapterRegistry } from '../adapter-registry.js';
import { loopStalledMs, stalledByUs } from './loop-lag.js';
import type { HealthMonitorOptions } from './monitor-options.js';
import { readWithin } from './read-within.js';
import { answered, busy, down, pick, refusedAccess, saysDown } from './verdicts.js';

/** What one account's check decided, before it is written. */
interface Checked {
  account: Account;
  health: Health;
  status: AccountStatus;
  write: HealthWrite;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Reads every account at its broker on a schedule: connected, trading allowed, data stale, reconnect
 * required. Keeps balance and equity fresh for sizing, moves the copy status between connected,
 * disconnected and reconnect_required, and writes an event when health or status changes.
 */
export class HealthMonitor {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  /** Ends the wait between two slices of a scheduled round (stop). */
  private wake: (() => void) | null = null;
  private readonly lastOk = new Map<string, number>();
  /**
   * When the current run of failed checks began, per account, and how stalled our own loop had been by then
   * (so the outage clock counts only the time we were running).
   */
  private readonly failingSince = new Map<string, { at: number; stalled: number }>();
  /** Rounds to sit out after a failed check: a busy broker is not asked again at once. */
  private readonly backoff = new Map<string, number>();
  private readonly startedAt: number;
  private readonly stalled: () => number;
  /** Good reads of the current round, written as one statement when the round ends. */
  private snapshots: EquitySnapshot[] = [];
  private readonly lastSnapshot = new Map<string, number>();
  private lastPrune = 0;
  private warnedLong = false;

  constructor(
    private readonly store: Store,
    private readonly adapters: AdapterRegistry,
    private readonly opts: HealthMonitorOptions,
  ) {
    this.startedAt = this.now();
    this.stalled = opts.loopStalledMs ?? (opts.clock ? () => 0 : loopStalledMs);
    this.stalled();
  }

  /**
   * The first round waits `firstDelayMs`, so start-up (and the first requests) are not competing with it. Each
   * round spreads its slices over `intervalMs`; the next one starts `intervalMs` after the previous one started
   * (at once if it ran longer).
   */
  start(firstDelayMs = 1500): void {
    const tick = () => {
      const began = Date.now();
      this.round = this.runRound(true)
        .catch(() => undefined)
        .finally(() => {
          this.round = null;
          if (this.timer !== null)
            this.timer = setTimeout(tick, Math.max(0, this.opts.intervalMs - (Date.now() - began)));
        });
    };
    this.timer = setTimeout(tick, firstDelayMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake?.();
    await this.round;
  }

  /** One whole round now, slice after slice without waiting between them (tests, and callers that need it done). */
  async checkAll(): Promise<void> {
    await this.runRound(false);
  }

  private async runRound(spread: boolean): Promise<void> {
    const size = Math.max(1, this.opts.sliceSize ?? 100);
    const owns = this.opts.owns ?? (() => true);
    const began = Date.now();
    const slices = spread ? Math.max(1, Math.ceil((await this.store.accounts.countLive()) / size)) : 1;
    let after: string | null = null;
    let read = 0;
    for (let k = 0; ; k++) {
      // stop() clears the timer and wakes a pause under way; stopped while a slice ran there was none to wake, and
      // the round went on into the next slice's pause (a shutdown waited up to intervalMs / slices for it).
      if (spread && this.timer === null) return;
      if (k > 0) {
        // Spread: slice k starts k/slices of the interval into the round; unspread: yield to waiting I/O.
        const at = spread ? began + Math.floor((k * this.opts.intervalMs) / slices) : 0;
        await this.pause(Math.max(0, at - Date.now()));
        if (spread && this.timer === null) return;
      }
      const page = await this.store.accounts.livePage(after, size);
      if (page.length === 0) break;
      after = page[page.length - 1]!.id;
      const slice = page.filter((a) => owns(a.id) && !this.deferred(a));
      read += slice.length;
      await this.checkSlice(slice);
      if (page.length < size) break;
    }
    const ms = Date.now() - began;
    if (spread && ms > this.opts.intervalMs && !this.warnedLong) {
      this.warnedLong = true;
      this.opts.onLongRound?.({
        accounts: read,
        ms,
        intervalMs: this.opts.intervalMs,
        perSecond: Math.round((read / Math.max(1, ms)) * 10_000) / 10,
      });
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }

  /** Reads the slice's brokers in parallel, then writes what they said: one statement, one batch of events. */
  private async checkSlice(slice: Account[]): Promise<Health[]> {
    if (slice.length === 0) return [];
    const checked = await Promise.all(slice.map((a) => this.read(a)));
    await this.store.accounts.applyHealth(checked.map((c) => c.write));
    const events = [];
    for (const c of checked) events.push(...(await this.transitions(c)));
    if (events.length > 0) await this.store.events.emit(events);
    await this.writeSnapshots().catch(() => undefined);
    return checked.map((c) => c.health);
  }

  /**
   * The round's reads as equity history: one insert for all accounts, at most one row per account per
   * `snapshotEveryMs` (a 15 s round would otherwise write four), then old rows pruned now and then.
   */
  private async writeSnapshots(): Promise<void> {
    const every = this.opts.snapshotEveryMs ?? MINUTE;
    const round = this.snapshots;
    this.snapshots = [];
    if (every <= 0) return;
    const due = round.filter((r) => r.at.getTime() - (this.lastSnapshot.get(r.accountId) ?? -Infinity) >= every);
    await this.store.equity.insertMany(due);
    for (const r of due) this.lastSnapshot.set(r.accountId, r.at.getTime());
    const now = this.now();
    if (now - this.lastPrune >= HOUR) {
      this.lastPrune = now;
      await this.store.equity.prune(new Date(now - (this.opts.snapshotRetentionMs ?? 30 * DAY)));
    }
  }

  /** Writes before reads: a busy or backing-off account is read in a later round, unless its data grows stale. */
  private deferred(a: Account): boolean {
    const now = this.now();
    // An account never read well by this process counts from the monitor's start, so it is not put off for ever.
    const since = this.lastOk.get(a.id) ?? this.startedAt;
    const overdue = now - since >= this.opts.staleAfterMs;
    const skip = this.backoff.get(a.id) ?? 0;
    if (skip > 0 && !overdue) {
      this.backoff.set(a.id, skip - 1);
      return true;
    }
    return !overdue && (this.opts.isBusy?.(a.id) ?? false);
  }

  private now(): number {
    return (this.opts.clock ?? Date.now)();
  }

  /** Reads one account now and writes what it found (its health, funds, status and events). */
  async check(account: Account): Promise<Health> {
    const [health] = await this.checkSlice([account]);
    return health!;
  }

  /** One account's broker read and what it means; nothing is written yet. */
  private async read(account: Account): Promise<Checked> {
    const now = this.now();
    const stalledBefore = this.stalled();
    let health: Health;
    let status: AccountStatus = account.status;
    let funds: HealthWrite['funds'] = null;
    try {
      const adapter = await this.adapters.forAccount(account);
      const info = await readWithin((signal) => adapter.accountInfo(signal), this.opts.checkTimeoutMs);
      this.lastOk.set(account.id, now);
      this.failingSince.delete(account.id);
      this.backoff.delete(account.id);
      funds = { balance: info.balance, equity: info.equity };
      this.snapshots.push({ accountId: account.id, at: new Date(now), balance: info.balance, equity: info.equity });
      health = answered(account.health, now);
      if (status === 'disconnected' || status === 'reconnect_required') status = 'connected';
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'upstream_unavailable';
      const message = err instanceof Error ? err.message : String(err);
      const stale = now - (this.lastOk.get(account.id) ?? account.updatedAt.getTime()) > this.opts.staleAfterMs;
      if (code === 'reconnect_required') {
        health = refusedAccess(account.health, now, stale, message);
        if (!keepsItsStatus(status)) status = 'reconnect_required';
      } else if (code === 'rate_limited' || (!saysDown(err) && this.underPressure(account.id, now, stalledBefore))) {
        // A rate-limit refusal is an answer: the broker is there, so no outage has begun.
        if (code === 'rate_limited') this.failingSince.delete(account.id);
        // Only busy (or slow for less than downAfterMs): asked again less often.
        health = busy(account.health, now, stale, message);
        this.backoff.set(account.id, Math.min(4, 2 * (this.backoff.get(account.id) ?? 0) + 1));
      } else {
        health = down(account.health, now, stale, message);
        if (!keepsItsStatus(status)) status = 'disconnected';
      }
    }
    return { account, health, status, write: { id: account.id, health, funds } };
  }

  /**
   * A failed read is pressure, not an outage, while copies to the account are still queued or on the wire (their
   * own outcomes say whether the broker is down; marking it disconnected would skip every copy behind them), or
   * while reads have failed for less than downAfterMs. Only a read that failed while our own event loop was
   * running counts: on a starved machine a read "times out" because the broker's answer waited behind us, and a
   * Slave called down for that has every copy behind it skipped, for nothing. The outage clock
   * - starts at the first such clean failure, and restarts at the connection's last answer of any kind, a copy's
   *   included: a broker that just confirmed or refused a write is there, however its health read fared;
   * - counts only the time our loop was running (our stalls are subtracted).
   * A real outage is still called, later by however long we were stalled; while every read is stalled (the
   * machine starved throughout) none is, and the copies' own outcomes (unresolved, settled by lookup) speak.
   */
  private underPressure(accountId: string, startedAt: number, stalledBefore: number): boolean {
    const now = this.now();
    const stalled = this.stalled();
    if (this.opts.isBusy?.(accountId)) {
      // The outage clock starts once the account is idle, so a burst does not use it up.
      this.failingSince.set(accountId, { at: now, stalled });
      return true;
    }
    if (stalledByUs(stalled - stalledBefore, now - startedAt)) return true;
    let since = this.failingSince.get(accountId);
    const answered = this.opts.lastAnswerAt?.(accountId);
    if (!since || (answered !== undefined && answered > since.at)) {
      since = { at: now, stalled };
      this.failingSince.set(accountId, since);
    }
    const failedFor = now - since.at - (stalled - since.stalled);
    return failedFor < (this.opts.downAfterMs ?? this.opts.staleAfterMs);
  }

  /** The account's status move (compare-and-set, rare) and the events of what changed, after its health is written. */
  private async transitions({ account, health, status }: Checked) {
    const changed = (
      ['state', 'connected', 'tradingAllowed', 'inSync', 'dataStale', 'reconnectRequired'] as const
    ).some((k) => account.health[k] !== health[k]);
    const events = [];
    if (changed)
      events.push({
        userId: account.userId,
        accountId: account.id,
        type: 'account.health_changed',
        payload: { before: pick(account.health), after: pick(health), lastError: health.lastError },
      });
    if (
      status !== account.status &&
      (await this.store.accounts.setStatusIf(
        account.id,
        account.status,
        status,
        status === 'connected' ? null : health.lastError,
      ))
    ) {
      events.push({
        userId: account.userId,
        accountId: account.id,
        type: 'account.status_changed',
        payload: { before: account.status, after: status, reason: health.lastError },
      });
    }
    return events;
  }
}
