import type { IntentAction } from '../domain/intent-action.js';
import type { OrderOutcome } from '../platforms/adapter.js';
import type { NewEvent } from '../store/repos/events.js';
import type { PositionLink } from '../domain/ledger-types.js';

export interface CopyOptions {
  /** API path: the trade row already exists (recorded before the Master broker was called). */
  tradeId?: string;
  source?: 'api' | 'watcher' | 'reconciler';
  /** The Master broker's answer on the API path (fill price, ids). */
  masterOutcome?: OrderOutcome & { kind: 'confirmed' };
  requestId?: string | null;
  /** Only these Slaves (the reconciler heals one Slave at a time). */
  onlySlaves?: Set<string>;
  /** Reconciler heals: the row's action name (heal_open, heal_close, ...). */
  intentAction?: IntentAction;
  /** Targets for heals of follow-up kind, per Slave. */
  targets?: Map<string, PositionLink[]>;
  /** Watcher: actions its start diff found missed while the service was down (the circuit breaker skips them). */
  catchUp?: boolean;
  /**
   * Watcher, replaying the Master's deal history after a gap: the action happened and is over (a position opened
   * and closed while nobody watched), so every Slave gets a row skipped with this reason (`code: detail`).
   */
  skipEvery?: string;
  /** Extra events recorded with the intents (the order route's order.accepted), given the number of sends. */
  events?: (copiedTo: number) => NewEvent[];
}

export interface CopyResult {
  tradeId: string;
  /** False when the action id was recorded before: nothing was planned or sent again. */
  recorded: boolean;
  dispatched: number;
  /** Resolves when every dispatched copy has its outcome written. */
  done: Promise<void>;
}
