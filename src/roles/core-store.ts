import type { Logger } from 'pino';
import type { OpsListener } from '../api/ops-server.js';
import type { Config } from '../config/config.js';
import { redactUrl } from '../store/db.js';
import { Store } from '../store/store.js';
import { isStoreUnavailable, unavailableReason } from '../store/unavailable.js';

export interface StoreWaitOptions {
  logger: Logger | false;
  /**
   * Where this process answers /readyz once started (serve's and an api's main port, a worker's probes port):
   * while PostgreSQL cannot be reached, a listener there answers 503 with the `store` check failing, and closes
   * once the store is open.
   */
  probes?: { host: string; port: number };
  metricsToken?: string | undefined;
  /** Ends the wait (a stop signal during the start): the open rejects with StoreWaitAborted. */
  signal?: AbortSignal;
  /** First wait between attempts (doubling up to maxWaitMs); tests shorten them. */
  firstWaitMs?: number;
  maxWaitMs?: number;
}

/** The start was asked to stop while it waited for PostgreSQL: nothing was opened. */
export class StoreWaitAborted extends Error {
  constructor() {
    super('stopped while waiting for PostgreSQL');
    this.name = 'StoreWaitAborted';
  }
}

/**
 * The store every role opens, apart from the rest of the core so a process can start opening it (the embedded
 * store's worker thread takes seconds at start) before it loads the engine and the HTTP code.
 *
 * On PostgreSQL, a process started while the server cannot be reached (not up yet, restarting, cut off: what
 * unavailable.ts calls `store_unavailable`) waits for it instead of exiting, like the NATS wait in bus-connect.ts:
 * a warning per attempt naming the server without its password, /readyz 503 with `store` failing when `wait.probes`
 * is given, attempts 250 ms apart doubling to 5 s. Any other failure (a refused password, a database that does not
 * exist, a migration that fails) ends the start at once.
 */
export async function openCoreStore(
  cfg: Config,
  opts: { idleInTransactionMs?: number; wait?: StoreWaitOptions } = {},
): Promise<Store> {
  const open = () =>
    Store.open({
      dataDir: cfg.dataDir,
      databaseUrl: cfg.databaseUrl,
      ...(opts.idleInTransactionMs !== undefined ? { idleInTransactionMs: opts.idleInTransactionMs } : {}),
    });
  if (!cfg.databaseUrl || !opts.wait) return open();
  return openWhenUp(open, cfg.databaseUrl, opts.wait);
}

async function openWhenUp(open: () => Promise<Store>, url: string, o: StoreWaitOptions): Promise<Store> {
  const first = o.firstWaitMs ?? 250;
  const max = o.maxWaitMs ?? 5000;
  let waiting: OpsListener | null = null;
  const t0 = Date.now();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const store = await open();
        if (attempt > 1 && o.logger)
          o.logger.info(
            { postgres: redactUrl(url), attempts: attempt, waitedMs: Date.now() - t0 },
            'PostgreSQL is reachable: starting',
          );
        return store;
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error;
        const retryInMs = Math.min(max, first * 2 ** Math.min(attempt - 1, 20));
        if (o.logger)
          o.logger.warn(
            { postgres: redactUrl(url), attempt, retryInMs, reason: unavailableReason(error) },
            'PostgreSQL is not reachable: not ready, trying again (the process starts once it connects)',
          );
        if (o.signal?.aborted) throw new StoreWaitAborted();
        waiting ??= await probesWhileWaiting(o);
        await pause(retryInMs, o.signal);
        if (o.signal?.aborted) throw new StoreWaitAborted();
      }
    }
  } finally {
    await (waiting as OpsListener | null)?.close();
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** /healthz, /readyz (503, `store` failing) and /metrics on the process's probes port while it waits, if it has one. */
async function probesWhileWaiting(o: StoreWaitOptions): Promise<OpsListener | null> {
  if (!o.probes) return null;
  const [{ startOpsListener }, { Readiness }, { ServiceMetrics }] = await Promise.all([
    import('../api/ops-server.js'),
    import('../metrics/readiness.js'),
    import('../metrics/service-metrics.js'),
  ]);
  const readiness = new Readiness();
  readiness.register('store', async () => {
    throw new Error('PostgreSQL is not reachable yet');
  });
  return startOpsListener(
    { metrics: new ServiceMetrics(), readiness, metricsToken: o.metricsToken },
    { host: o.probes.host, port: o.probes.port, logger: false },
  );
}
