import type { FrameSocket } from '../../platforms/bridge/session.js';

/**
 * The service's side of an MT4 long-polling connection, as a session sees it: what the session sends waits in a
 * queue until the EA's next poll takes it; a poll held open wakes as soon as there is something to say.
 */
export class PollSocket implements FrameSocket {
  private queue: string[] = [];
  private wake: (() => void) | null = null;
  closed = false;

  send(text: string): void {
    this.queue.push(text);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  get pending(): boolean {
    return this.queue.length > 0 || this.closed;
  }

  /** Everything queued, as the JSON array a poll answers with. */
  take(): string {
    const out = `[${this.queue.join(',')}]`;
    this.queue = [];
    return out;
  }

  /** Resolves when there is something to say, when `release` is called, or after `ms`. */
  hold(ms: number): Promise<void> {
    if (this.pending || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.release();
      this.wake = done;
    });
  }

  /** Answers the poll held now (a newer poll arrived, or its client went away). */
  release(): void {
    this.wake?.();
  }
}
