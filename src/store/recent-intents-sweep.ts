import type { TradesRepo } from './repos/trades.js';

/**
 * Moves what copy_intents_recent still holds after `olderThanMs` to copy_intents proper (migration 0013): the rows of
 * a record whose process died before its move, or whose move failed, or that another process recorded and has not
 * moved. They are readable where they are; the sweep keeps the narrow table small, since reads of copy_intents scan
 * it without secondary indexes. Every process may sweep at once (TradesRepo.moveRecentOlderThan).
 */
export class RecentIntentsSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly trades: TradesRepo,
    private readonly opts: { everyMs: number; olderThanMs: number; onError?: (err: unknown) => void },
  ) {}

  start(): void {
    if (this.timer) return;
    void this.run();
    this.timer = setInterval(() => void this.run(), this.opts.everyMs);
    this.timer.unref();
  }

  /**
   * One sweep, until nothing old is left, then a vacuum of the narrow table (a sweep under way is not started twice);
   * also called by tests.
   */
  run(): Promise<void> {
    this.running ??= this.sweep()
      .catch((err: unknown) => this.opts.onError?.(err))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private async sweep(): Promise<void> {
    const limit = 5000;
    while (!this.stopped) {
      const moved = await this.trades.moveRecentOlderThan(this.opts.olderThanMs, limit);
      if (moved < limit) break;
    }
    if (!this.stopped) await this.trades.vacuumRecent();
  }
}
