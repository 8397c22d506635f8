/**
 * Paces writes to one broker connection below its limit. Callers wait for a token instead of being refused,
 * so a burst of copies becomes a steady stream rather than a wave of 429s.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;
  /** A drain is queued as a microtask (a token was free when a caller queued). */
  private draining = false;

  constructor(
    private readonly ratePerSec: number,
    private readonly burst = Math.max(1, Math.floor(ratePerSec)),
  ) {
    this.tokens = this.burst;
  }

  /**
   * A token now if one is free and nobody waits, without a promise: a fan-out's thousand sends mostly find one, and
   * awaiting an already-resolved promise cost each of them a microtask turn and its allocations before the write.
   */
  tryTake(): boolean {
    this.refill();
    if (this.queue.length > 0 || this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * The caller's turn after `tryTake` refused: always queued, even when a token has refilled since. Handed a token
   * at once, it would resume a microtask later, and a `tryTake` in between (the next send of the same fan-out loop)
   * could take the next token and write first; queued, that `tryTake` sees the queue and waits behind it.
   */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.schedule();
    });
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSec);
    this.last = now;
  }

  private schedule(): void {
    if (this.timer || this.draining) return;
    this.refill();
    if (this.tokens >= 1) {
      // A token is free already: served on this turn of the loop, in order, not after a timer's millisecond.
      this.draining = true;
      queueMicrotask(() => {
        this.draining = false;
        this.drain();
      });
      return;
    }
    const waitMs = Math.max(1, ((1 - this.tokens) / this.ratePerSec) * 1000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.drain();
    }, waitMs);
  }

  private drain(): void {
    this.refill();
    while (this.queue.length > 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.queue.shift()!();
    }
    if (this.queue.length > 0) this.schedule();
  }
}
