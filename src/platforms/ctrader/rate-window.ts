/** A place in the window, taken for one request: `answered()` when its first answer (or its failure) is in. */
export interface RateSlot {
  answered(): void;
}

/**
 * Makes callers wait instead of exceeding a per-connection limit: the Open API blocks a payload type
 * (BLOCKED_PAYLOAD_TYPE) above 50 req/s, 5 req/s for history (fact sheet §7), counting requests as they arrive.
 * We cannot see arrivals, but a request's answer comes after the server counted it: a slot is held from the send
 * until the answer and for one second after, so the server's second is over for it whatever the delay on the way
 * (a stalled client or server, a burst queued on the wire). A fixed margin on send times cannot promise that,
 * and a margin large enough to be safe cost every burst its size (a 1.2 s window paced 50 per 1.2 s: 109-115 %
 * of N/rate, issue 12).
 *
 * Two lanes. Trading writes (orders, amendments, closes) are served before any waiting read, and reads never take
 * the last `writeReserve` places: a health round or a reconcile burst (54 reads in a second on a connection of 13
 * accounts, every minute of the soak) otherwise filled the window, and a fan-out's orders arriving then waited up to
 * a second behind them (cTrader Slaves' open p99 ~0.8 s in some soak minutes). Reads may wait for writes; a write
 * waits only for other writes. Within a lane, first come, first served.
 */
export class RateWindow {
  /** Taken slots: when their answer came (null: not answered yet, the slot cannot expire). */
  private slots: Array<{ at: number | null }> = [];
  private readonly writes: Array<(slot: RateSlot) => void> = [];
  private readonly reads: Array<(slot: RateSlot) => void> = [];
  /** Places a read may take: the rest are kept for writes. */
  private readonly readLimit: number;
  private timer: NodeJS.Timeout | null = null;
  /** Acquires that found no free slot and had to queue (tests and benches read it: a burst that waited). */
  waited = 0;

  constructor(
    private readonly perSecond: number,
    private readonly windowMs = 1_000,
    private readonly now: () => number = Date.now,
    writeReserve = 0,
  ) {
    // At least one place for reads, or a window with no writes would stall every read for ever.
    this.readLimit = Math.max(1, perSecond - Math.max(0, writeReserve));
  }

  /**
   * A slot once one is free. Aborted while still waiting, it leaves the queue and rejects with the signal's reason:
   * a request its caller gave up on is never sent, so it costs the window nothing.
   */
  acquire(signal?: AbortSignal, lane: 'write' | 'read' = 'read'): Promise<RateSlot> {
    const queue = lane === 'write' ? this.writes : this.reads;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      let served = false;
      const give = (slot: RateSlot) => {
        served = true;
        signal?.removeEventListener('abort', withdraw);
        resolve(slot);
      };
      const withdraw = () => {
        const i = queue.indexOf(give);
        if (i < 0) return;
        queue.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', withdraw, { once: true });
      queue.push(give);
      this.pump();
      // Not served by that pump: it waits (a scan of the queue here cost O(n) per request in a burst of 1,000).
      if (!served) this.waited += 1;
    });
  }

  /** Slots counted now: taken and not answered, or answered less than a window ago. */
  held(): number {
    const now = this.now();
    return this.slots.filter((s) => this.counts(s, now)).length;
  }

  /** A slot still counts against the window: not answered yet, or answered less than a window ago. */
  private counts(s: { at: number | null }, now: number): boolean {
    return s.at === null || now - s.at < this.windowMs;
  }

  private pump(): void {
    const now = this.now();
    this.slots = this.slots.filter((s) => this.counts(s, now));
    for (;;) {
      const free = this.slots.length < this.perSecond;
      const give =
        free && this.writes.length > 0
          ? this.writes.shift()!
          : free && this.reads.length > 0 && this.slots.length < this.readLimit
            ? this.reads.shift()!
            : null;
      if (!give) break;
      const s: { at: number | null } = { at: null };
      this.slots.push(s);
      give({
        answered: () => {
          if (s.at !== null) return;
          s.at = this.now();
          this.pump();
        },
      });
    }
    if ((this.writes.length === 0 && this.reads.length === 0) || this.timer) return;
    let first = Number.POSITIVE_INFINITY;
    for (const s of this.slots) if (s.at !== null && s.at < first) first = s.at;
    // Nothing answered yet: the next answer pumps again.
    if (first === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(0, first + this.windowMs - now),
    );
  }
}
