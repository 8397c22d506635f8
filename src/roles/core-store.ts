import type { Config } from '../config/config.js';
import { Store } from '../store/store.js';

/**
 * The store every role opens, apart from the rest of the core so a process can start opening it (the embedded
 * store's worker thread takes seconds at start) before it loads the engine and the HTTP code.
 */
export function openCoreStore(cfg: Config, opts: { idleInTransactionMs?: number } = {}): Promise<Store> {
  return Store.open({
    dataDir: cfg.dataDir,
    databaseUrl: cfg.databaseUrl,
    ...(opts.idleInTransactionMs !== undefined ? { idleInTransactionMs: opts.idleInTransactionMs } : {}),
  });
}
