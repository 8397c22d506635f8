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
  logger?: Logger | false;
  /**
   * Broker writes stop this long before the lease runs out on this process's clock (`mayWrite`; default a fifth of
   * the TTL): a write that passes the check reaches the broker before anyone else may take the lease over.
   */
  writeMarginMs?: number;
  /** Monotonic milliseconds (tests). */
  clock?: () => number;
}

/**
 * Holds this worker's leases: renews them, takes free or expired ones up to a fair share (the wanted keys over
 * the live owners, this one included), and is the store's fence (the epoch held per key). A lease whose renewal
 * has not succeeded within its TTL on this process's own clock is dropped from the fence before the store would
 * let anyone else take it, so a process that was paused refuses its own late writes even before it hears so.
 */
export class LeaseKeeper implements Fence {
  readonly owner: string;
  private readonly held = new Map<string, { epoch: number; validUntil: number }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** Takeover work, one batch after the other. */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly clock: () => number;

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

  /** One round now, then one every `renewMs`. Resolves once the first round's takeovers are done. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.tick();
    await this.chain;
    const renewMs = this.opts.renewMs ?? Math.max(100, Math.floor(this.opts.ttlMs / 3));
    const loop = () => {
      this.timer = setTimeout(() => {
        void this.tick().finally(() => {
          if (!this.stopped) loop();
        });
      }, renewMs);
    };
    loop();
  }

  /** Stops renewing and waits for a round and takeovers in progress; the leases stay held until release(). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await this.chain.catch(() => undefined);
  }

  /** Gives every lease up at once (after the work under them stopped), so a sibling takes them without waiting. */
  async releaseAll(): Promise<void> {
    const all = [...this.held.entries()];
    this.held.clear();
    await Promise.all(all.map(([key, h]) => this.leases.release(key, this.owner, h.epoch).catch(() => false)));
  }

  /** One renewal and acquisition round (concurrent calls share it). */
  tick(): Promise<void> {
    if (!this.ticking)
      this.ticking = this.round()
        .catch((err: unknown) => this.log('lease round failed', err))
        .finally(() => {
          this.ticking = null;
        });
    return this.ticking;
  }

  private async round(): Promise<void> {
    const ttl = this.opts.ttlMs;
    const lost: string[] = [];
    const round = [...this.held.entries()].map(([key, h]) => ({ key, h }));
    // Measured from before the call: the database may have extended them at any time after this point.
    const sentAt = this.clock();
    try {
      // One statement for every lease held, not one per lease.
      const renewed = new Set(
        (
          await this.leases.renewMany(
            this.owner,
            round.map(({ key, h }) => ({ key, epoch: h.epoch })),
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
    } catch (err) {
      // The store is unreachable: the leases run out on our clock (epochOf) unless a later renewal works.
      this.log('lease renewal failed', err);
    }
    if (lost.length > 0) this.queue(() => this.opts.onLost(lost), 'lease loss handling failed');
    if (this.stopped) return;

    const wanted = await this.opts.wanted();
    const live = await this.leases.live();
    const liveKeys = new Set(live.map((l) => l.key));
    const owners = new Set(live.map((l) => l.owner)).add(this.owner).size;
    const share = Math.ceil(wanted.length / owners);
    let mine = wanted.filter((k) => this.held.has(k)).length;
    const taken: string[] = [];
    for (const key of wanted) {
      if (mine >= share || this.stopped) break;
      if (this.held.has(key) || liveKeys.has(key)) continue;
      const sentAt = this.clock();
      const got = await this.leases.acquire(key, this.owner, ttl);
      if (!got) continue;
      this.held.set(key, { epoch: got.epoch, validUntil: sentAt + ttl });
      taken.push(key);
      mine++;
    }
    if (taken.length > 0) this.queue(() => this.opts.onAcquired(taken), 'taking over leases failed');
  }

  private queue(step: () => Promise<void>, failure: string): void {
    this.chain = this.chain.then(step).catch((err: unknown) => this.log(failure, err));
  }

  private log(msg: string, err: unknown): void {
    if (this.opts.logger) this.opts.logger.error({ err }, msg);
  }
}
