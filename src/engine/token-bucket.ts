/**
 * Paces writes to one broker connection below its limit. Callers wait for a token instead of being refused,
 * so a burst of copies becomes a steady stream rather than a wave of 429s.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;

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

  take(): Promise<void> {
    this.refill();
    if (this.queue.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
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
    if (this.timer) return;
    const waitMs = Math.max(1, ((1 - this.tokens) / this.ratePerSec) * 1000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refill();
      while (this.queue.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.queue.shift()!();
      }
      if (this.queue.length > 0) this.schedule();
    }, waitMs);
  }
}
