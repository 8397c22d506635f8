import type { Logger } from 'pino';

/** How the watcher watches its Masters (intervals, which Masters are this process's). */
export interface WatcherOptions {
  logger?: Logger | false;
  /** How often every Master is diffed against the store even when it streams (missed events, reconnects). */
  resyncMs?: number;
  /** Poll interval for adapters that cannot stream. */
  pollMs?: number;
  /** How often new Master accounts are picked up. */
  scanMs?: number;
  /**
   * A streaming Master is diffed (and its deals replayed) once more this long after its watch starts: a trade made
   * while the broker was still setting up the subscription reaches no listener, and would otherwise wait for the
   * next resync. 0: no second look. Default 3000.
   */
  recheckMs?: number;
  /**
   * After a job fails (the store or the broker unreachable: the event that brought it is gone), the Master is diffed
   * again after this long, doubling on each failure in a row up to 8x: without it a close seen while PostgreSQL
   * restarted waited for the next resync (up to `resyncMs`) and the Slaves held the position meanwhile. Default 500.
   */
  retryMs?: number;
  /** Which Masters this process watches (a worker: those whose lease it holds). Default: all. */
  owns?: (accountId: string) => boolean;
}
