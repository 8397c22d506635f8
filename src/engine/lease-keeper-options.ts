import type { Logger } from 'pino';

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
