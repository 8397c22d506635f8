import type { Logger } from 'pino';
import type { Fence } from '../domain/lease.js';
import type { LeasesRepo } from '../store/repos/leases.js';

export interface LeaseKeeperOptions {
  owner: string;
  ttlMs: number;
  /** How often held leases are renewed and free ones looked for (default a third of the TTL). */
  renewMs?: number;
  /** The keys this process should hold, most important first (Masters before Slaves). */
  wanted: () => Promise<string[]>;
  /**
   * Called with keys just taken (already in the fence), one call at a time and in order: the role settles and
   * reconciles what they cover before starting their work. A failure is logged; the keys stay held.
   */
  onAcquired: (keys: string[]) => Promise<void>;
  /** Called with keys lost (taken over after a missed renewal) or released: their work stops. */
  onLost: (keys: string[]) => Promise<void>;
  /**
   * Keys are shared out per group (the fair share of each group is counted on its own keys), so that a second
   * worker gets half of the Masters and not, say, every Slave while the first keeps every Master. Default: one group.
   */
  group?: (key: string) => string;
  /**
   * Handing keys over to a worker that holds less than its share (rebalancing): called with the keys about to be
   * given, still held and in the fence. The role stops starting new work under them and resolves once the work
   * already queued or on the wire under them has finished. Without it, this worker never gives a key up (only
   * `releaseAll` and losses move keys).
   */
  drain?: (keys: string[]) => Promise<void>;
  /**
   * After `drain`, the keys are out of the fence (every later write under them is refused before it leaves) but
   * still held and renewed at the store; resolves once no write under them is on the wire any more. Only then is
   * the lease released, so the successor never settles a write of ours that could still land.
   */
  quiesce?: (keys: string[]) => Promise<void>;
  /** Called once given keys are released at the store (the role tells the other workers to look now). */
  onReleased?: (keys: string[]) => void;
  /** Which of these held keys to give first (default: the order given, least wanted first). */
  giveOrder?: (keys: string[]) => string[];
  /**
   * At most this many keys of a group handed over per round (default 2): moves are gradual. A function of the
   * group lets cheap keys (nothing to drain) move faster than costly ones.
   */
  givePerRound?: number | ((group: string) => number);
  /**
   * Hysteresis: a worker gives keys only when it holds more than `ceil(n / workers) + slack` (then down to the
   * share), or when another one holds fewer than `floor(n / workers) - slack` (then one key, by the richest).
   * Default 0: the counts settle within one of each other and then nothing moves.
   */
  slack?: number;
  logger?: Logger | false;
  /**
   * Broker writes stop this long before the lease runs out on this process's clock (`mayWrite`; default a fifth of
   * the TTL): a write that passes the check reaches the broker before anyone else may take the lease over.
   */
  writeMarginMs?: number;
  /** Monotonic milliseconds (tests). */
  clock?: () => number;
}

/** The presence row of a worker: a lease row only it ever holds, renewed with its leases, so it counts when it holds nothing. */
export const presenceKey = (owner: string) => `worker:${owner}`;
const isPresence = (key: string) => key.startsWith('worker:');

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
  private readonly held = new Map<string, { epoch: number; validUntil: number }>();
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
  /** Keys being handed over: drained, then out of the fence (`releasing`) and renewed until released. */
  private readonly draining = new Set<string>();
  private readonly releasing = new Map<string, { epoch: number }>();
  private giving: Promise<void> | null = null;
  /** When this worker released a key, and since when a key was seen free (it is not taken back at once). */
  private readonly releasedAt = new Map<string, number>();
  private readonly freeSince = new Map<string, number>();
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
    return [...new Set([...this.draining, ...this.releasing.keys()])];
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
    const all = [...this.held.entries(), ...this.releasing.entries()];
    this.held.clear();
    this.releasing.clear();
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
    const ttl = this.opts.ttlMs;
    const lost: string[] = [];
    const round = [...this.held.entries()].map(([key, h]) => ({ key, h }));
    const handing = [...this.releasing.entries()];
    // Measured from before the call: the database may have extended them at any time after this point.
    const sentAt = this.clock();
    try {
      // One statement for every lease held, the ones being handed over and this worker's presence, not one per lease.
      const presence = this.presence;
      const renewed = new Set(
        (
          await this.leases.renewMany(
            this.owner,
            [
              ...round.map(({ key, h }) => ({ key, epoch: h.epoch })),
              ...handing.map(([key, h]) => ({ key, epoch: h.epoch })),
              ...(presence === null ? [] : [{ key: presenceKey(this.owner), epoch: presence }]),
            ],
            ttl,
          )
        ).map((l) => l.key),
      );
      for (const { key, h } of round) {
        if (this.held.get(key) !== h) continue;
        if (renewed.has(key)) h.validUntil = sentAt + ttl;
        else {
          this.held.delete(key);
          lost.push(key);
        }
      }
      // Out of the fence already, their work stopped: nothing left to tell the role.
      for (const [key, h] of handing)
        if (!renewed.has(key) && this.releasing.get(key) === h) this.releasing.delete(key);
      if (presence !== null && this.presence === presence && !renewed.has(presenceKey(this.owner)))
        this.presence = null;
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
    const ttl = this.opts.ttlMs;
    if (this.stopped) return;
    // Announced in this round (a start, or presence lost): its look at the live workers may have come just before
    // another one's announcement (see `secondLook`).
    const announced = this.presence === null;
    if (this.presence === null) {
      this.presence = (await this.leases.acquire(presenceKey(this.owner), this.owner, ttl))?.epoch ?? null;
      // Workers gone for an hour or more: their presence rows go (each process announces itself under a new id).
      await this.leases
        .prune('worker:', 3_600_000)
        .catch((err: unknown) => this.log('pruning presence rows failed', err));
    }
    if (this.stopped) return;

    const wanted = await this.opts.wanted();
    const live = await this.leases.live();
    const now = this.clock();
    const owners = new Map<string, string>();
    const workers = new Set<string>([this.owner]);
    for (const l of live) {
      workers.add(l.owner);
      if (!isPresence(l.key)) owners.set(l.key, l.owner);
    }
    for (const key of wanted)
      if (owners.has(key)) {
        this.freeSince.delete(key);
        // Taken by the one it was handed to (or anyone): the hand-over is over, the giver may take it again later.
        if (owners.get(key) !== this.owner) this.releasedAt.delete(key);
      } else if (!this.freeSince.has(key)) this.freeSince.set(key, now);
    for (const key of this.freeSince.keys()) if (owners.has(key)) this.freeSince.delete(key);

    const groupOf = this.opts.group ?? (() => '');
    const groups = new Map<string, string[]>();
    for (const key of wanted) {
      const g = groupOf(key);
      const list = groups.get(g);
      if (list) list.push(key);
      else groups.set(g, [key]);
    }
    let taken: string[] = [];
    const toGive: string[] = [];
    const perRound = this.opts.givePerRound ?? 2;
    for (const [group, keys] of groups) {
      const plan = planShare({
        keys,
        owners,
        workers: [...workers],
        me: this.owner,
        mine: (k) => this.held.has(k) && !this.draining.has(k),
        slack: this.opts.slack ?? 0,
      });
      let mine = plan.mine;
      const asked: string[] = [];
      for (const key of keys) {
        if (this.stopped) break;
        if (this.held.has(key) || this.releasing.has(key) || owners.has(key)) continue;
        // Free for a TTL and still nobody's (a worker present but not taking): taken whatever the share says.
        const orphan = now - (this.freeSince.get(key) ?? now) >= ttl;
        if (mine >= plan.hi && !orphan) continue;
        // Just handed over by this worker: left to the one it was given to, unless nobody took it within a TTL.
        const released = this.releasedAt.get(key);
        if (released !== undefined && now - released < ttl && !orphan && workers.size > 1) continue;
        asked.push(key);
        mine++;
      }
      if (asked.length > 0 && !this.stopped) {
        // One statement for the whole group; a key another worker took meanwhile is simply not in the answer.
        const sentAt = this.clock();
        const got = new Map((await this.leases.acquireMany(asked, this.owner, ttl)).map((l) => [l.key, l.epoch]));
        for (const key of asked) {
          const epoch = got.get(key);
          if (epoch === undefined) continue;
          this.held.set(key, { epoch, validUntil: sentAt + ttl });
          this.releasedAt.delete(key);
          taken.push(key);
        }
      }
      // A group with a key nobody holds is still moving: nothing more is given until it is taken.
      if (plan.give > 0 && !keys.some((k) => !owners.has(k) && !this.held.has(k))) {
        const candidates = keys.filter((k) => this.held.has(k) && !this.draining.has(k));
        const order = this.opts.giveOrder ? this.opts.giveOrder(candidates) : [...candidates].reverse();
        const limit = typeof perRound === 'function' ? perRound(group) : perRound;
        toGive.push(...order.slice(0, Math.min(plan.give, limit)));
      }
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
    const fresh = new Set(taken);
    const back: string[] = [];
    for (const keys of groups.values()) {
      const hi = Math.ceil(keys.length / workers.size);
      const mine = keys.filter((k) => this.held.has(k) && !this.draining.has(k));
      // Least wanted first: the end of the list (the order given puts Masters first).
      const excess = mine.filter((k) => fresh.has(k)).reverse();
      back.push(...excess.slice(0, Math.max(0, mine.length - hi)));
    }
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

  /**
   * Hands `keys` over: the role drains their work; then they leave the fence (later writes are refused before they
   * leave) while still renewed, until no write under them is on the wire; then they are released at the store.
   */
  private async give(keys: string[]): Promise<void> {
    for (const k of keys) this.draining.add(k);
    try {
      // A drain that failed part-way is not a reason to keep the keys: the fence and `quiesce` below are what make
      // the release safe (nothing can still land once they are done).
      await this.opts.drain!(keys).catch((err: unknown) => this.log('draining leases before handing over failed', err));
      const out: string[] = [];
      for (const k of keys) {
        const h = this.held.get(k);
        if (!h) continue; // lost meanwhile: its loss was handled as any other
        this.held.delete(k);
        this.releasing.set(k, { epoch: h.epoch });
        out.push(k);
      }
      if (out.length === 0) return;
      await this.opts.quiesce?.(out);
      const released: string[] = [];
      for (const k of out) {
        const h = this.releasing.get(k);
        if (!h) continue;
        this.releasing.delete(k);
        if (await this.leases.release(k, this.owner, h.epoch).catch(() => false)) {
          this.releasedAt.set(k, this.clock());
          this.freeSince.set(k, this.clock());
          released.push(k);
        }
      }
      if (released.length > 0) this.opts.onReleased?.(released);
    } finally {
      for (const k of keys) this.draining.delete(k);
    }
  }

  private queue(step: () => Promise<void>, failure: string): void {
    this.chain = this.chain.then(step).catch((err: unknown) => this.log(failure, err));
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}

export interface SharePlan {
  /** The keys of the group this worker holds (not counting those it is handing over). */
  mine: number;
  /** The fair share: `ceil(keys / workers)`; free keys are taken up to it. */
  hi: number;
  lo: number;
  /** How many keys to hand over now (0 within the hysteresis). */
  give: number;
}

/**
 * The share decision of one group of keys, from who holds what (`owners`, live leases) and the live workers.
 * A worker gives the keys it holds above `hi + slack`; and when it is the richest (ties: the smallest owner id,
 * so only one of them moves) while another worker holds fewer than `lo - slack`, it gives one. Within those bounds
 * nothing moves, so two workers never pass a key back and forth.
 */
export function planShare(o: {
  keys: readonly string[];
  owners: ReadonlyMap<string, string>;
  workers: readonly string[];
  me: string;
  mine: (key: string) => boolean;
  slack: number;
}): SharePlan {
  const n = o.keys.length;
  const w = Math.max(1, o.workers.length);
  const hi = Math.ceil(n / w);
  const lo = Math.floor(n / w);
  const counts = new Map<string, number>(o.workers.map((x) => [x, 0]));
  for (const k of o.keys) {
    const owner = o.owners.get(k);
    if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  const mine = o.keys.filter(o.mine).length;
  counts.set(o.me, mine);
  // Once past the band, back down to the share itself (not to its edge), so the next small change moves nothing.
  let give = mine > hi + o.slack ? mine - hi : 0;
  if (give === 0 && mine > lo) {
    const needy = [...counts].some(([x, c]) => x !== o.me && c < lo - o.slack);
    const richest = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
    if (needy && richest === o.me) give = 1;
  }
  return { mine, hi, lo, give };
}
