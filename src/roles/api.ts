import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { assertPortsFree } from '../config/port-check.js';
import type { DemoBrokers } from '../demo/demo-brokers.js';
import type { Store } from '../store/store.js';
import { NatsBus } from '../bus/nats-bus.js';
import { composeCore } from './core.js';
import { RemoteOrders } from './remote-orders.js';
import { PANIC_STARTED } from './worker.js';
import { apiDeps, listen } from './http.js';
import { settleKeys, sweepInFlightKeys, IN_FLIGHT_STALE_MS } from './in-flight.js';
import { requireScaleOut } from './scale-out.js';

export interface ApiOptions {
  /** The brokers of a `copytrade simulator` process (tests, a try-out); default: the real platforms. */
  simulator?: DemoBrokers | Promise<DemoBrokers>;
}

export interface ApiProcess {
  baseUrl: string;
  v1BaseUrl: string;
  store: Store;
  close(): Promise<void>;
}

/**
 * `copytrade api`: the HTTP families, the dashboard and the event stream. Starts no watcher, settle loop,
 * reconciler, health round or webhook deliverer: those belong to the workers, under their leases.
 * The order route hands each order to the worker holding the Master's lease over NATS request/reply; a
 * panic-close job is recorded here and run by the worker holding the deployment lease.
 */
export async function startApi(cfg: Config, logger: Logger | false, opts: ApiOptions = {}): Promise<ApiProcess> {
  requireScaleOut(cfg, 'api');
  await assertPortsFree(cfg.host, [cfg.port, cfg.v1Port]);
  const instanceId = randomUUID();
  let signal: ((jobId: string) => void) | null = null;
  const core = await composeCore(cfg, logger, {
    ...(opts.simulator ? { simulator: opts.simulator } : {}),
    deliverNow: false,
    waitProbes: { host: cfg.host, port: cfg.port },
    // A panic-close job is run by the worker holding the deployment lease; this wakes it at once.
    panicHandOff: (job) => signal?.(job.id),
  });
  signal = (jobId) => core.bus.publish(PANIC_STARTED, jobId);
  const { store, cleanup, hooks } = core;
  try {
    // The event stream reads the feed; the deliverer stays off (a worker holds it under its lease).
    hooks.feed.start();
    cleanup.unshift(async () => hooks.feed.stop());
    if (!(core.bus instanceof NatsBus)) throw new Error('an api process needs NATS (NATS_URL)');
    // Orders go to the worker holding the Master: the Master's write, the intents and the copies happen there.
    // Its budget: the Master's write and one lookup by tag, each up to the broker timeout, then the record.
    const deps = {
      ...apiDeps(core, cfg, instanceId),
      orders: new RemoteOrders(core.bus, 2 * cfg.brokerTimeoutMs + 10_000),
    };
    const { baseUrl, v1BaseUrl } = await listen(deps, cfg, logger, cleanup, core);
    await settleKeys(store, instanceId, new Date(Date.now() - IN_FLIGHT_STALE_MS), logger);
    sweepInFlightKeys(store, instanceId, logger, cleanup);
    if (logger) for (const url of new Set([baseUrl, v1BaseUrl])) logger.info(`Server listening at ${url}`);
    return {
      baseUrl,
      v1BaseUrl,
      store,
      async close() {
        for (const step of cleanup)
          await step().catch((err: unknown) => logger && logger.error({ err }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => undefined);
    throw err;
  }
}
