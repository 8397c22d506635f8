import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sliding one-second window that makes callers wait instead of exceeding a per-connection limit: the Open API
 * blocks a payload type (BLOCKED_PAYLOAD_TYPE) above 50 req/s, 5 req/s for history (fact sheet §7).
 */
export class RateWindow {
  private times: number[] = [];

  constructor(private readonly perSecond: number) {}

  async acquire(): Promise<void> {
    for (;;) {
      const now = Date.now();
      while (this.times.length > 0 && now - this.times[0]! >= 1000) this.times.shift();
      if (this.times.length < this.perSecond) {
        this.times.push(now);
        return;
      }
      await sleep(this.times[0]! + 1000 - now + 1);
    }
  }
}
