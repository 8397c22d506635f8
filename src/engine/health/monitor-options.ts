export interface HealthMonitorOptions {
  intervalMs: number;
  /** Funds older than this are flagged `dataStale`. */
  staleAfterMs: number;
  /** One check may not take longer than this (a hung broker must not stall the round). */
  checkTimeoutMs: number;
  /**
   * A broker that does not answer is called disconnected only once its checks have failed for this long
   * (default `staleAfterMs`): one slow answer under a burst is pressure, not an outage. An OAuth refusal is
   * acted on at once. The time counted is time *our* event loop was running (see `loopStalledMs`) since the
   * connection's last answer of any kind (see `lastAnswerAt`): a broker is never called down because we were slow.
   */
  downAfterMs?: number;
  /**
   * When this connection last gave an answer of any kind (a copy confirmed or refused by the broker), in the
   * monitor's clock. A copy's answer is proof of life: the outage clock restarts from it.
   */
  lastAnswerAt?: (accountId: string) => number | undefined;
  /**
   * Total time this process's event loop has been stalled, ever increasing (default: measured, see
   * ./loop-lag.ts; with an injected `clock`, none, so the two clocks are never mixed). Subtracted from the
   * time a broker has been failing.
   */
  loopStalledMs?: () => number;
  /**
   * True while the account's copies are queued or on the wire. Its health read then waits for a later round
   * (writes come first on a shared rate limit), for at most `staleAfterMs` since the last good read.
   */
  isBusy?: (accountId: string) => boolean;
  /** Which accounts this process reads (a worker: those whose lease it holds). Default: all. */
  owns?: (accountId: string) => boolean;
  /** At most one equity snapshot per account this often (default 60 s; 0 = none are written). */
  snapshotEveryMs?: number;
  /** Snapshots older than this are deleted (default 30 days), checked at most once an hour. */
  snapshotRetentionMs?: number;
  /**
   * Accounts read and written together (default 100): one read of the slice from the store, its broker reads in
   * parallel, then one statement for their health and funds. A scheduled round spreads its slices evenly over
   * `intervalMs`, so at 10,000 accounts no moment of it holds the event loop for long.
   */
  sliceSize?: number;
  /**
   * Called once, the first time a scheduled round ends after its interval: the accounts cannot all be read that
   * often (at 10,000 cTrader accounts the floor is accounts x 2 requests / 50 req/s per connection). The round is
   * stretched, never overlapped: its slices run back to back and the next round starts when it ends, so each
   * account is read every `ms` instead of every `intervalMs`. The caller logs it.
   */
  onLongRound?: (round: LongRound) => void;
  clock?: () => number;
}

/** A scheduled round that took longer than its interval: how long, for how many reads, at what pace. */
export interface LongRound {
  /** Accounts this process read in the round (its own, not deferred). */
  accounts: number;
  ms: number;
  intervalMs: number;
  /** Reads a second over the round: the pace the brokers (and our own pacing) allowed. */
  perSecond: number;
}
