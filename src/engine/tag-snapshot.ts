import type { BrokerAdapter, TagLookup } from '../platforms/adapter.js';

/** History before the oldest write being settled that is still searched: broker clocks run behind ours. */
const LOOKBACK_MS = 5 * 60_000;
/**
 * An absence is trusted only from a reading this young. A resend follows an absence, so an older reading could
 * miss a write that reached the broker after it was taken; a found tag stays true however old the reading.
 */
const ABSENT_MAX_AGE_MS = 2_000;

/**
 * One Slave's tags during a settle pass, read with one `tagIndex` call instead of a `findByTag` per write: a
 * burst leaves hundreds of unresolved writes on one account, and one lookup each (positions, orders and
 * history, behind the broker's rate limit) aged them past the staleness limit before they were settled.
 * Adapters without `tagIndex` are asked per tag, as before.
 */
export class TagSnapshot {
  private index: ReadonlyMap<string, TagLookup> | null = null;
  private readAt = 0;
  private readonly since: Date;

  constructor(
    private readonly adapter: BrokerAdapter,
    oldestWrite: Date,
    private readonly clock: () => number,
  ) {
    this.since = new Date(oldestWrite.getTime() - LOOKBACK_MS);
  }

  async find(tag: string): Promise<TagLookup> {
    if (!this.adapter.tagIndex) return this.adapter.findByTag(tag);
    const hit = this.index?.get(tag);
    if (hit) return hit;
    if (this.index && this.clock() - this.readAt <= ABSENT_MAX_AGE_MS) return { found: false };
    // The age counts from before the read: what arrived at the broker during it may be missing from it.
    const startedAt = this.clock();
    this.index = await this.adapter.tagIndex(this.since);
    this.readAt = startedAt;
    return this.index.get(tag) ?? { found: false };
  }
}
