/**
 * Leases: one worker process owns a resource (an account's broker connection and the work on it) at a time.
 * The epoch is the fencing token: it grows at every change of owner, so a write made under an older one is
 * recognisably late and the store refuses it.
 */

/** The lease key of an account: its watcher, settle, reconcile and health run only where this is held. */
export const accountLeaseKey = (accountId: string) => `account:${accountId}`;

/** What a process holding leases tells the store: who it is and which epoch it holds for each key. */
export interface Fence {
  readonly owner: string;
  /** The epoch this process holds for `key`, or undefined when it does not hold it (any write under it is refused). */
  epochOf(key: string): number | undefined;
}

/** A write fenced by a lease this process no longer holds (expired and taken over, or never held). */
export class StaleLeaseError extends Error {
  constructor(
    readonly key: string,
    readonly heldEpoch: number | undefined,
    readonly current: { owner: string; epoch: number } | null,
  ) {
    super(
      `stale lease ${key}: this process holds ${heldEpoch === undefined ? 'no epoch' : `epoch ${heldEpoch}`}, ` +
        (current ? `the store has epoch ${current.epoch}` : 'the store has no lease'),
    );
    this.name = 'StaleLeaseError';
  }
}

/**
 * How long a SIGKILLed worker's accounts wait for a successor: the TTL, less the part of it since the last renewal,
 * plus the successor's next round (every quarter of it). At 4 s a killed worker's Masters are held again 3-5 s after
 * the kill (issue 43: 11-18 s at the old 15 s). Renewed every second, a lease closes its write gate only after three
 * renewals in a row failed to land (the gate closes with a fifth of the TTL left).
 */
export const DEFAULT_LEASE_TTL_MS = 4000;
