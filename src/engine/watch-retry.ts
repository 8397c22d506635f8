/**
 * A watch's retry after a failed job: the event the job carried is gone, so a diff (with the deal replay) finds what
 * it held once the cause (the store or the broker unreachable) has passed. One retry pending at a time, after
 * `baseMs` doubling on each failure in a row up to 8x; a job that succeeds resets the count.
 */
export class WatchRetry {
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;

  constructor(
    private readonly baseMs: number,
    private readonly diff: () => void,
  ) {}

  failed(): void {
    if (this.timer) return;
    const ms = this.baseMs * 2 ** Math.min(3, this.failures++);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.diff();
    }, ms);
    this.timer.unref();
  }

  succeeded(): void {
    this.failures = 0;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
