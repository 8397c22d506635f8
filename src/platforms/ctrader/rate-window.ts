import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sliding one-second window that makes callers wait instead of exceeding a per-connection limit: the Open API
 * blocks a payload type (BLOCKED_PAYLOAD_TYPE) above 50 req/s, 5 req/s for history (fact sheet §7).
 */
export class RateWindow {
  private times: number[] = [];

  /**
   * The window is a little longer than the server's second: requests sent in a burst at the end of one window
   * can arrive together with the next burst, and the server counts arrivals.
   */
  constructor(
    private readonly perSecond: number,
    private readonly windowMs = 1_200,
  ) {}

  async acquire(): Promise<void> {
    for (;;) {
      const now = Date.now();
      while (this.times.length > 0 && now - this.times[0]! >= this.windowMs) this.times.shift();
      if (this.times.length < this.perSecond) {
        this.times.push(now);
        return;
      }
      await sleep(this.times[0]! + this.windowMs - now + 1);
    }
  }
}
