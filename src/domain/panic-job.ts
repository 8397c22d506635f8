/**
 * What a panic-close job reports, per account and per position, while it runs and when it ends. Plain data:
 * the job's progress column holds exactly this, so a restarted service resumes from it.
 */

export type PanicScope = 'account' | 'group';

/**
 * The reason a panic-close job gives the copy links of the accounts it flattens, as it starts: a Master's later
 * close or cancel of what the job closed is then recorded as a skip, not sent to find nothing (a "rejected" row).
 */
export const PANIC_CLOSED = 'panic_closed';
/** running until every account is flat (succeeded) or out of rounds with something left (failed). */
export type PanicJobState = 'running' | 'succeeded' | 'failed';

export interface PositionResult {
  positionId: string;
  symbol: string;
  side: string;
  volume: string;
  /** closing = a close is being sent (or was, when the service stopped mid-write); settled by the next read. */
  outcome: 'closing' | 'closed' | 'failed' | 'unresolved';
  closePrice: string | null;
  error: string | null;
  attempts: number;
  /** How the close was known: the broker's answer, or a later read that no longer listed the position. */
  settledBy: 'answer' | 'read' | null;
}

export interface OrderResult {
  orderId: string;
  symbol: string;
  side: string;
  type: string;
  volume: string;
  /** gone = no longer pending at a later read (cancelled, or filled: a fill shows up as a position and is closed). */
  outcome: 'cancelling' | 'cancelled' | 'gone' | 'failed' | 'unresolved';
  error: string | null;
  attempts: number;
  settledBy: 'answer' | 'read' | null;
}

export interface AccountPanicReport {
  accountId: string;
  state: 'running' | 'flat' | 'failed';
  /** Rounds started so far (each begins with a fresh read of the broker). */
  round: number;
  closed: number;
  failed: number;
  /** Open positions left at the last read (0 = flat). */
  remaining: number;
  cancelled: number;
  /** Pending orders left at the last read (counted only when the job cancels them). */
  remainingOrders: number;
  error: string | null;
  positions: PositionResult[];
  orders: OrderResult[];
}

export interface PanicProgress {
  maxRounds: number;
  /** Why the job runs, e.g. "manual" or the risk rule that fired; also the lock's statusReason. */
  reason: string;
  accounts: AccountPanicReport[];
}

export interface PanicJob {
  id: string;
  userId: string;
  scope: PanicScope;
  targetId: string;
  state: PanicJobState;
  cancelPending: boolean;
  progress: PanicProgress;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const emptyReport = (accountId: string): AccountPanicReport => ({
  accountId,
  state: 'running',
  round: 0,
  closed: 0,
  failed: 0,
  remaining: 0,
  cancelled: 0,
  remainingOrders: 0,
  error: null,
  positions: [],
  orders: [],
});

/** Recomputes the counters from the per-position results (the one place they are derived). */
export function tally(r: AccountPanicReport): void {
  r.closed = r.positions.filter((p) => p.outcome === 'closed').length;
  r.failed = r.positions.filter((p) => p.outcome === 'failed' || p.outcome === 'unresolved').length;
  r.cancelled = r.orders.filter((o) => o.outcome === 'cancelled' || o.outcome === 'gone').length;
}
