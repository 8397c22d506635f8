import type { Logger } from 'pino';
import type { BreakerOptions } from './circuit-breaker.js';
import type { PreTradeCheck } from './planner.js';

export interface CopyEngineOptions {
  clock?: () => number;
  preTradeCheck?: PreTradeCheck;
  /** Per-Master ceiling on actions in a window (circuit-breaker.ts); off when absent. */
  breaker?: BreakerOptions;
  /** Where a ledger write the store refuses is reported. */
  logger?: Logger | false;
  /**
   * A worker: whether it still holds the Master's lease, asked right before each broker write of its copies. A
   * process paused past its lease must not send what its successor may already have settled and resent.
   */
  mayWrite?: (masterAccountId: string) => boolean;
  /**
   * On PostgreSQL, a watcher's copy plans on its group's Slaves as a read confirmed them at most this long ago
   * (ms), without reading them again; its record goes in only if nothing but a health round wrote them since. What
   * may be this old is their health and funds only. 0: every copy reads them first. Default 1000.
   */
  heldSlavesMaxAgeMs?: number;
  /** How a copy waits before sending again a write its broker refused for now (tests move their clock). */
  sleep?: (ms: number) => Promise<void>;
}
