import { randomUUID } from 'node:crypto';
import type { ReceiptSealer } from './receipts/sealer.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { dataFile, type Config } from './config/config.js';
import type { ApiDeps } from './api/deps.js';
import type { SimBroker } from './simulator/broker.js';
import type { Store } from './store/store.js';
import type { DemoBrokers } from './demo/demo-brokers.js';
import type { DemoCredentials, SeedHooks } from './demo/seed.js';
import { assertPortsFree } from './config/port-check.js';
import type { ServiceMetrics } from './metrics/service-metrics.js';
import type { Readiness } from './metrics/readiness.js';
import { openCoreStore } from './roles/core-store.js';

/** After the start, before the first reconcile pass (the health monitor's first round waits as long). */
const FIRST_RECONCILE_DELAY_MS = 1500;

export interface Service {
  baseUrl: string;
  v1BaseUrl: string;
  store: Store;
  broker: SimBroker;
  deps: ApiDeps;
  demo: DemoCredentials | null;
  servers: FastifyInstance[];
  /** This process's /metrics registry. */
  metrics: ServiceMetrics;
  /** This process's /readyz checks. */
  readiness: Readiness;
  /** The receipts' sealer (docs/receipts.md); tests run a pass with `runOnce(0)`. */
  sealer: ReceiptSealer;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /**
   * Demo mode: the simulated brokers of a `copytrade simulator` process (see demo/simulator-client.ts). Without
   * it, demo mode runs them in this process (tests), where they share the `sim` platform's market. A promise lets
   * the simulator start while the store opens.
   */
  simulator?: DemoBrokers | Promise<DemoBrokers>;
  /** Test hook into the demo seeding (interrupt it after a step). */
  seedHooks?: SeedHooks;
  /**
   * On PostgreSQL: a start waiting for the database (not reachable yet) ends when this aborts (a stop signal during
   * the start), rejecting with StoreWaitAborted.
   */
  startAborted?: AbortSignal;
  /** On PostgreSQL: what to do when the serve lease is lost (default: this process stops as on SIGTERM). */
  onServeLeaseLost?: () => void;
  /** Test hook: the clock of access token and API key lifetimes (AuthConfig.clock). */
  authClock?: () => number;
}

/**
 * Composition root: config -> one implementation per port -> servers. Every port has an embedded
 * implementation, so nothing here needs an external server unless DATABASE_URL asks for PostgreSQL.
 */

export async function startService(cfg: Config, logger: Logger | false, opts: ServiceOptions = {}): Promise<Service> {
  // Before anything is opened or written: a taken port is a clear error at once, not a half-made data dir.
  await assertPortsFree(cfg.host, [cfg.port, cfg.v1Port]);
  const startedAt = new Date();
  const instanceId = randomUUID();
  // The store first: the embedded one opens in its worker thread (about 2 s at load) while this thread loads the
  // engine and the HTTP code (2.5-4.4 s at load 10 when imported up front), instead of after it.
  // On PostgreSQL started before the database (or during an outage), it waits, answering /readyz 503 on its port.
  const opening = openCoreStore(cfg, {
    wait: {
      logger,
      probes: { host: cfg.host, port: cfg.port },
      metricsToken: cfg.metricsToken,
      ...(opts.startAborted ? { signal: opts.startAborted } : {}),
    },
  });
  // composeCore awaits it and throws its error; until then a failed open must not count as unhandled.
  opening.catch(() => undefined);
  const loaded = await loadRest().catch(async (err: unknown) => {
    await opening.then(
      (s) => s.close(),
      () => undefined,
    );
    throw err;
  });
  const { composeCore, apiDeps, listen, HealthMonitor, startOperatorListener } = loaded;
  const { IN_FLIGHT_STALE_MS, settleKeys, sweepInFlightKeys } = loaded;
  const core = await composeCore(cfg, logger, {
    store: opening,
    ...(opts.simulator ? { simulator: opts.simulator } : {}),
    ...(opts.authClock ? { authClock: opts.authClock } : {}),
  });
  const { store, box, broker, adapters, demoBrokers, dispatcher, panic, risk, engine } = core;
  const { watcher, settler, reconciler, auth, cleanup, metrics, readiness } = core;
  // Not ready until the start below is complete, and no longer once shutdown begins (a rolling restart's
  // load balancer stops sending before the servers close).
  let serving = false;
  readiness.register('started', async () => {
    if (!serving) throw new Error('starting or stopping');
  });
  try {
    if (store.database.kind === 'postgres') {
      const { holdServeLease } = await import('./roles/serve-lease.js');
      const release = await holdServeLease(store.leases, instanceId, {
        logger,
        onLost: opts.onServeLeaseLost ?? (() => process.kill(process.pid, 'SIGTERM')),
      });
      // Last before the store closes (the core's final step): every copier of this process has stopped by then.
      cleanup.splice(cleanup.length - 1, 0, release);
    }
    const deps = apiDeps(core, cfg, instanceId);
    const { baseUrl, v1BaseUrl, servers } = await listen(deps, cfg, logger, cleanup, core);
    // The embedded store is this process's alone: the operator's CLI reaches it through this listener instead.
    const operatorFile = store.database.kind === 'pglite' ? dataFile(cfg, 'operator.json') : null;
    if (operatorFile) {
      const operator = await startOperatorListener({ store, auth }, operatorFile, logger);
      cleanup.unshift(() => operator.close());
    }

    // Health after the demo's accounts exist, so the first round already sees them.
    // A read may take longer than a write's answer (first sign-in, TLS handshake); only a hung broker is "down".
    const health = new HealthMonitor(store, adapters, {
      intervalMs: cfg.healthIntervalMs,
      staleAfterMs: 3 * cfg.healthIntervalMs,
      checkTimeoutMs: Math.max(10_000, cfg.brokerTimeoutMs),
      isBusy: (id) => dispatcher.busy(id),
      lastAnswerAt: (id) => dispatcher.lastAnswerAt(id),
      onLongRound: (r) =>
        logger &&
        logger.warn(
          r,
          'a health round took longer than its interval: accounts are read less often (docs/scale-out.md)',
        ),
    });
    cleanup.unshift(() => health.stop());

    const demo = cfg.demo
      ? await (await import('./demo/seed.js')).seedDemo({
          store,
          auth,
          cfg,
          baseUrl,
          v1BaseUrl,
          box,
          brokers: demoBrokers!,
          ...(opts.seedHooks ? { hooks: opts.seedHooks } : {}),
        })
      : null;

    if (demo && deps.alertInbox) await (await import('./demo/demo-alerts.js')).seedDemoAlertChannel(store, deps.alerts);
    if (demo && cfg.demoBridge) {
      // The demo's self-hosted MetaTrader account: a simulated EA dials this service's bridge endpoint.
      cleanup.unshift(() => demoBrokers!.stopEas());
      const { startDemoBridge } = await import('./demo/demo-bridge.js');
      await startDemoBridge({ store, box, tokens: core.bridge.tokens, brokers: demoBrokers!, baseUrl }).catch(
        (err: unknown) => logger && logger.warn({ err }, 'the demo bridge account could not start'),
      );
    }

    if (cfg.healthIntervalMs > 0) health.start();

    // The copy engine beyond the order route: settle what the last run left unknown, then watch every Master
    // (its start diff copies what happened while down), then reconcile on a schedule.
    cleanup.unshift(async () => {
      // A copy waiting to send again after a 429 would hold the stop up to its rule's max delay; the next start's
      // settle pass looks it up and sends it while fresh.
      engine.retrying.stop();
      await watcher.stop();
      await Promise.all([reconciler.stop(), settler.stop()]);
      await dispatcher.drain();
      await engine.flush();
    });
    await settler.runOnce({ graceMs: 0 });
    // After the settle pass, so an order whose outcome it just learnt is answered with that outcome.
    await settleKeys(
      store,
      instanceId,
      store.database.kind === 'pglite' ? startedAt : new Date(Date.now() - IN_FLIGHT_STALE_MS),
      logger,
    );
    if (store.database.kind === 'postgres') sweepInFlightKeys(store, instanceId, logger, cleanup);
    await watcher.start();
    settler.start();
    // Receipts for ended ledger rows, read behind the copy path (docs/receipts.md).
    if (cfg.receiptSealMs > 0) core.sealer.start();
    // The first reconcile pass reads every Slave of every Master (10,000 accounts: all of them): it waits, like the
    // health monitor's first round, so the first requests are not queued behind it. The watcher's start diffs
    // already copy what happened while down.
    const reconcileLater = setTimeout(() => {
      if (serving) reconciler.start();
    }, FIRST_RECONCILE_DELAY_MS);
    reconcileLater.unref();
    cleanup.unshift(async () => clearTimeout(reconcileLater));

    await panic.resumeRunning();
    risk.start(10_000);
    if (cfg.sloEvaluateMs > 0) core.slo.start(cfg.sloEvaluateMs);
    // The line scripts wait for (Fastify's usual wording): everything a client reads after it exists by now.
    serving = true;
    if (logger) for (const url of new Set([baseUrl, v1BaseUrl])) logger.info(`Server listening at ${url}`);

    return {
      baseUrl,
      v1BaseUrl,
      store,
      broker,
      deps,
      demo,
      servers,
      metrics,
      readiness,
      sealer: core.sealer,
      async close() {
        serving = false;
        for (const step of cleanup)
          await step().catch((err: unknown) => logger && logger.error({ err }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => undefined);
    throw err;
  }
}

/** What `serve` needs beyond the store, loaded while the store opens. */
async function loadRest() {
  const [core, http, health, operator, inFlight] = await Promise.all([
    import('./roles/core.js'),
    import('./roles/http.js'),
    import('./engine/health/monitor.js'),
    import('./api/operator/server.js'),
    import('./roles/in-flight.js'),
  ]);
  return {
    composeCore: core.composeCore,
    apiDeps: http.apiDeps,
    listen: http.listen,
    HealthMonitor: health.HealthMonitor,
    startOperatorListener: operator.startOperatorListener,
    IN_FLIGHT_STALE_MS: inFlight.IN_FLIGHT_STALE_MS,
    settleKeys: inFlight.settleKeys,
    sweepInFlightKeys: inFlight.sweepInFlightKeys,
  };
}
