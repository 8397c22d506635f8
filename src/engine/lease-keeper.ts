import type { Fence } from '../domain/lease.js';
import type { LeasesRepo } from '../store/repos/leases.js';
import { keysToAsk, keysToGive, newLeaseBook, observeLive, type LeaseBook } from './lease-book.js';
import { handOver } from './lease-handover.js';
import type { LeaseKeeperOptions } from './lease-keeper-options.js';
import { renewHeld } from './lease-renew.js';
import { firstRoundExcess, groupKeys, planShare, presenceKey } from './lease-share.js';

export { planShare, presenceKey } from './lease-share.js';

/**
 * Holds this worker's leases: renews them, takes free or expired ones up to a fair share, and is the store's fence
 * (the epoch held per key). The fair share of a group of keys is `ceil(keys / live workers)`, where every live
 * worker counts, also one holding nothing: each announces itself by a presence row renewed in the same statement
 * as its leases. A worker above its share (a newcomer appeared) hands keys over a few per round: it drains the
 * work under them, and releases them only once no write under them is on the wire (see `drain`, `quiesce`).
 * A lease whose renewal has not succeeded within its TTL on this process's own clock is dropped from the fence
 * before the store would let anyone else take it, so a process that was paused refuses its own late writes even
 * before it hears so.
 */
export class LeaseKeeper implements Fence {
  readonly owner: string;
  private readonly book: LeaseBook = newLeaseBook();
  private readonly held = this.book.held;
  private timer: NodeJS.Timeout | null = null;
  /** The acquisition part of a round in flight (concurrent calls share it). */
  private rounding: Promise<void> | null = null;
  /** A renewal statement in flight (a round's and the renewal timer's share it). */
  private renewing: Promise<void> | null = null;
  /** Takeover work, one batch after the other. */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly clock: () => number;
  /** This worker's presence row (its epoch), once announced. */
  private presence: number | null = null;
  private giving: Promise<void> | null = null;
  /** A round asked for while one runs (a sibling released keys): run once more after it. */
  private again = false;

  constructor(
    private readonly leases: LeasesRepo,
    private readonly opts: LeaseKeeperOptions,
  ) {
    this.owner = opts.owner;
    this.clock = opts.clock ?? (() => performance.now());
  }

  epochOf(key: string): number | undefined {
    const h = this.held.get(key);
    return h && h.validUntil > this.clock() ? h.epoch : undefined;
  }

  holds(key: string): boolean {
    return this.epochOf(key) !== undefined;
  }

  /**
   * Whether a broker write under `key` may leave now: held, with the write margin left before the lease runs out
   * on this process's monotonic clock (a process that was stopped sees that its time passed, before it can renew).
   */
  mayWrite(key: string): boolean {
    const h = this.held.get(key);
    const margin = this.opts.writeMarginMs ?? Math.floor(this.opts.ttlMs / 5);
    return h !== undefined && h.validUntil - margin > this.clock();
  }

  heldKeys(): string[] {
    return [...this.held.keys()].filter((k) => this.holds(k));
  }

  /** Keys being handed over now (drained or waiting for their last writes before release). */
  givingKeys(): string[] {
    return [...new Set([...this.book.draining, ...this.book.releasing.keys()])];
  }

  /** One round now, then one every `renewMs`. Resolves once the first round's takeovers are done. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.tick();
    await this.chain;
    const renewMs = this.opts.renewMs ?? Math.max(100, Math.floor(this.opts.ttlMs / 4));
    // Renewals keep their cadence whatever a round costs: the next one is due `renewMs` after the last one ended,
    // not after the round that followed it. A round waits on `wanted` (every account of the store) and on the live
    // leases; on a loaded store that took seconds, the renewal came late, and `mayWrite` (a fifth of the TTL left)
    // refused broker writes for a moment while the lease was still ours (seen in CI: a panic-close job's blip).
    const loop = () => {
      this.timer = setTimeout(() => {
        void this.renewal().finally(() => {
          if (this.stopped) return;
          if (!this.rounding) void this.roundOnce();
          loop();
        });
      }, renewMs);
    };
    loop();
  }

  /**
   * Stops renewing and waits for a round, takeovers and a hand-over in progress; the leases stay held until
   * release().
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.renewing;
    await this.rounding;
    await this.giving;
    await this.chain.catch(() => undefined);
  }

  /**
   * Gives every lease up at once (after the work under them stopped), so a sibling takes them without waiting,
   * and withdraws this worker's presence so the others count it out of the shares at once.
   */
  async releaseAll(): Promise<void> {
    const all = [...this.held.entries(), ...this.book.releasing.entries()];
    this.held.clear();
    this.book.releasing.clear();
    const presence = this.presence;
    this.presence = null;
    await Promise.all([
      ...all.map(([key, h]) => this.leases.release(key, this.owner, h.epoch).catch(() => false)),
      presence === null ? null : this.leases.release(presenceKey(this.owner), this.owner, presence).catch(() => false),
    ]);
  }

  /** One renewal, then one acquisition round (concurrent calls share them). */
  async tick(): Promise<void> {
    await this.renewal();
    if (!this.stopped) await this.roundOnce();
  }

  /** The held leases renewed, and those not renewed handed to `onLost` (concurrent calls share one statement). */
  private renewal(): Promise<void> {
    if (!this.renewing)
      this.renewing = this.renew()
        .catch((err: unknown) => this.log('lease renewal failed', err))
        .finally(() => {
          this.renewing = null;
        });
    return this.renewing;
  }

  /** Free keys taken up to the share, excess handed over (concurrent calls share one round). */
  private roundOnce(): Promise<void> {
    if (!this.rounding)
      this.rounding = this.round()
        .catch((err: unknown) => this.log('lease round failed', err))
        .finally(() => {
          this.rounding = null;
        });
    return this.rounding;
  }

  /** A round soon (a sibling released keys for this worker to take): now, or right after the one running. */
  nudge(): void {
    if (this.stopped) return;
    if (!this.rounding) void this.tick();
    else if (!this.again) {
      this.again = true;
      void this.rounding.then(() => {
        this.again = false;
        if (!this.stopped) return this.tick();
      });
    }
  }

  private async renew(): Promise<void> {
    const presence = this.presence;
    let lost: string[] = [];
    try {
      const r = await renewHeld(this.leases, this.owner, this.opts.ttlMs, this.clock, this.book, presence);
      lost = r.lost;
      if (presence !== null && this.presence === presence && !r.presenceRenewed) this.presence = null;
    } catch (err) {
      // The store is unreachable: the leases run out on our clock (epochOf) unless a later renewal works.
      this.log('lease renewal failed', err);
    }
    if (lost.length > 0) {
      // Said now, not once their work has stopped: that waits behind the queue and on writes still on the wire
      // (a broker's timeout after a pause), and the fence already refuses anything new under them.
      if (this.opts.logger) this.opts.logger.warn({ keys: lost }, 'leases lost');
      this.queue(() => this.opts.onLost(lost), 'lease loss handling failed');
    }
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    // Announced in this round (a start, or presence lost): its look at the live workers may have come just before
    // another one's announcement (see `secondLook`).
    const announced = this.presence === null;
    if (announced) await this.announce();
    if (this.stopped) return;

    const wanted = await this.opts.wanted();
    const live = await this.leases.live();
    const { owners, workers, now } = observeLive(this.book, this.owner, wanted, live, this.clock());
    const groups = groupKeys(wanted, this.opts.group ?? (() => ''));
    let taken: string[] = [];
    const toGive: string[] = [];
    for (const [group, keys] of groups) {
      const plan = planShare({
        keys,
        owners,
        workers: [...workers],
        me: this.owner,
        mine: (k) => this.held.has(k) && !this.book.draining.has(k),
        slack: this.opts.slack ?? 0,
      });
      const asked = this.stopped ? [] : keysToAsk(this.book, keys, plan, owners, workers.size, now, this.opts.ttlMs);
      taken.push(...(await this.claim(asked)));
      toGive.push(...keysToGive(this.book, keys, plan.give, owners, this.opts, group));
    }
    if (announced && taken.length > 0 && !this.stopped) taken = await this.secondLook(taken, groups, workers);
    if (taken.length > 0) this.queue(() => this.opts.onAcquired(taken), 'taking over leases failed');
    if (toGive.length > 0 && this.opts.drain && !this.giving && !this.stopped) {
      this.giving = this.give(toGive)
        .catch((err: unknown) => this.log('handing leases over failed', err))
        .finally(() => {
          this.giving = null;
        });
    }
  }

  private async announce(): Promise<void> {
    this.presence = (await this.leases.acquire(presenceKey(this.owner), this.owner, this.opts.ttlMs))?.epoch ?? null;
    // Workers gone for an hour or more: their presence rows go (each process announces itself under a new id).
    await this.leases
      .prune('worker:', 3_600_000)
      .catch((err: unknown) => this.log('pruning presence rows failed', err));
  }

  /** One statement for a group's asked keys; a key another worker took meanwhile is simply not in the answer. */
  private async claim(asked: string[]): Promise<string[]> {
    if (asked.length === 0 || this.stopped) return [];
    const ttl = this.opts.ttlMs;
    const sentAt = this.clock();
    const got = new Map((await this.leases.acquireMany(asked, this.owner, ttl)).map((l) => [l.key, l.epoch]));
    const taken: string[] = [];
    for (const key of asked) {
      const epoch = got.get(key);
      if (epoch === undefined) continue;
      this.held.set(key, { epoch, validUntil: sentAt + ttl });
      this.book.releasedAt.delete(key);
      taken.push(key);
    }
    return taken;
  }

  /**
   * Two workers started at the same instant: of two announcements and two looks, at least one look comes after
   * the other's announcement, but the first worker's look may come before the second's, and it then took every
   * key (seen: 10,002 / 1 at 10,000 accounts, evened out only by the hand-over, two Masters a round). So a round
   * that announced looks again once it has taken keys: if workers appeared meanwhile, it gives back at once what
   * it took above its share of each group. Nothing has started under those keys yet (`onAcquired` has not run),
   * so there is nothing to drain. A worker alone pays one more read of the live leases at its start.
   */
  private async secondLook(taken: string[], groups: Map<string, string[]>, seen: Set<string>): Promise<string[]> {
    const workers = new Set(seen);
    for (const l of await this.leases.live()) workers.add(l.owner);
    if (workers.size === seen.size) return taken;
    const mine = (k: string) => this.held.has(k) && !this.book.draining.has(k);
    const back = firstRoundExcess(groups, workers.size, mine, new Set(taken));
    const given = back.map((key) => ({ key, epoch: this.held.get(key)!.epoch }));
    for (const key of back) this.held.delete(key);
    // One statement; a failure leaves them to expire within the TTL (they are out of the fence already).
    const released = await this.leases.releaseMany(this.owner, given).catch((err: unknown) => {
      this.log('giving back keys of a first round failed', err);
      return [];
    });
    if (released.length > 0) this.opts.onReleased?.(released);
    const gone = new Set(back);
    return taken.filter((k) => !gone.has(k));
  }

  /** Hands `keys` over (lease-handover.ts). */
  private give(keys: string[]): Promise<void> {
    return handOver(keys, this.book, {
      leases: this.leases,
      owner: this.owner,
      clock: this.clock,
      drain: this.opts.drain!,
      quiesce: this.opts.quiesce,
      onReleased: this.opts.onReleased,
      log: (msg, err) => this.log(msg, err),
    });
  }

  private queue(step: () => Promise<void>, failure: string): void {
    this.chain = this.chain.then(step).catch((err: unknown) => this.log(failure, err));
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}
