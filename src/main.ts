import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AuthService } from './auth/auth-service.js';
import { CredentialBox, insideDir, loadCredentialKeys } from './auth/credential-box.js';
import { dataFile, type Config } from './config/config.js';
import { AdapterRegistry } from './engine/adapter-registry.js';
import { Dispatcher } from './engine/dispatcher.js';
import { OrderService } from './engine/order-service.js';
import { CopyEngine } from './engine/copy-engine.js';
import { Watcher } from './engine/watcher.js';
import { Settler } from './engine/settler.js';
import { Reconciler } from './engine/reconciler.js';
import { PanicCloseService } from './engine/panic-close.js';
import { RiskGuard } from './engine/risk/guard.js';
import { ShadowService } from './engine/shadow.js';
import { buildServer } from './api/server.js';
import { settleInFlightKeys } from './api/idempotency-settle.js';
import type { ApiDeps } from './api/deps.js';
import { createSimAdapterFactory } from './platforms/sim/factory.js';
import { SimBroker } from './simulator/broker.js';
import { SimPersistence } from './simulator/persistence.js';
import { Store } from './store/store.js';
import { backfillIdentities } from './store/identity-backfill.js';
import { LocalBus } from './bus/local-bus.js';
import type { Bus } from './bus/bus.js';
import { HealthMonitor } from './engine/health/monitor.js';
import { realEndpoints } from './platforms/endpoints.js';
import { createCTraderAdapterFactory } from './platforms/ctrader/factory.js';
import { createMetaTraderAdapterFactory } from './platforms/metatrader/factory.js';
import { createTradeLockerAdapterFactory } from './platforms/tradelocker/factory.js';
import type { DemoBrokers } from './demo/demo-brokers.js';
import type { DemoCredentials, SeedHooks } from './demo/seed.js';
import { createWebhooks } from './webhooks/compose.js';
import { assertPortsFree } from './config/port-check.js';
import { startOperatorListener } from './api/operator/server.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { Readiness } from './metrics/readiness.js';

export interface Service {
  baseUrl: string;
  v1BaseUrl: string;
  store: Store;
  broker: SimBroker;
  deps: ApiDeps;
  demo: DemoCredentials | null;
  servers: FastifyInstance[];
  /** This process's /metrics registry (the lease work sets its leases gauge here). */
  metrics: ServiceMetrics;
  /** This process's /readyz checks (the lease work registers `leases` here). */
  readiness: Readiness;
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
}

/**
 * Composition root: config -> one implementation per port -> servers. Every port has an embedded
 * implementation, so nothing here needs an external server unless DATABASE_URL asks for PostgreSQL.
 */
/**
 * On a store shared by several processes, a key in flight for this long belongs to a process that stopped:
 * no request of ours runs for 2 minutes (a panic-close waits at most 30 s, broker calls time out in seconds).
 */
const IN_FLIGHT_STALE_MS = 120_000;

export async function startService(cfg: Config, logger: Logger | false, opts: ServiceOptions = {}): Promise<Service> {
  // Before anything is opened or written: a taken port is a clear error at once, not a half-made data dir.
  await assertPortsFree(cfg.host, [cfg.port, cfg.v1Port]);
  const startedAt = new Date();
  const instanceId = randomUUID();
  const store = await Store.open({ dataDir: cfg.dataDir, databaseUrl: cfg.databaseUrl });
  const cleanup: Array<() => Promise<void>> = [() => store.close()];
  const metrics = new ServiceMetrics();
  const readiness = new Readiness({
    onFailure: (check, err) => logger && logger.warn({ err, check }, 'readiness check failing'),
  });
  // Not ready until the start below is complete, and no longer once shutdown begins (a rolling restart's
  // load balancer stops sending before the servers close).
  let serving = false;
  readiness.register('started', async () => {
    if (!serving) throw new Error('starting or stopping');
  });
  readiness.register('store', () => store.ping());
  try {
    // Cross-process signals: NATS when configured (several processes on one PostgreSQL store), else in-process.
    // NATS client loaded only when configured: a single-process start does not pay for it.
    const bus: Bus = cfg.natsUrl
      ? await (await import('./bus/nats-bus.js')).NatsBus.connect(cfg.natsUrl)
      : new LocalBus();
    const detachBus = store.events.useBus(bus);
    if (bus.ping) readiness.register('bus', () => bus.ping?.() ?? Promise.resolve());
    cleanup.unshift(async () => {
      detachBus();
      await bus.close();
    });
    const ring = loadCredentialKeys({
      configured: cfg.secretKey,
      previous: cfg.secretKeyPrevious,
      keyFile: cfg.secretKeyFile,
    });
    const box = new CredentialBox(ring.current, ring.previous);
    if (logger && ring.file && !cfg.databaseUrl && insideDir(ring.file, cfg.dataDir)) {
      logger.warn(
        { keyFile: ring.file },
        'the key that encrypts broker credentials sits in the data dir beside what it encrypts: a copy of the dir holds both; ' +
          'move it outside (COPYTRADE_SECRET_KEY_FILE or --secret-key-file) or set COPYTRADE_SECRET_KEY',
      );
    }
    if (logger && ring.previous.length > 0)
      logger.warn(
        { previousKeys: ring.previous.length },
        'a credential key rotation is not finished: run `copytrade secrets rotate`',
      );
    // Before any request: platform A rows from before migration 0004 get their identity (or are disabled as duplicates).
    const backfilled = await backfillIdentities(store, (sealed) => box.open(sealed));
    if (logger && (backfilled.disabled.length > 0 || backfilled.unreadable.length > 0))
      logger.warn(backfilled, 'broker identities backfilled: duplicates disabled');
    const adapters = new AdapterRegistry({
      open: async (accountId) => {
        const sealed = await store.accounts.credentialsEnc(accountId);
        return sealed ? box.open(sealed) : null;
      },
    });

    // The built-in simulated broker: the `sim` platform (paper trading, demo, tests). Its state lives beside the store.
    const simFile = dataFile(cfg, 'simulator.json');
    const persistence = simFile ? new SimPersistence(simFile) : null;
    const snapshot = persistence?.load();
    const broker = new SimBroker(snapshot === undefined ? {} : { snapshot });
    if (persistence) {
      persistence.attach(broker);
      cleanup.unshift(async () => persistence.detach(broker));
    }
    adapters.register(createSimAdapterFactory(broker, { timeoutMs: cfg.brokerTimeoutMs }));
    let endpoints = realEndpoints();
    let demoBrokers: DemoBrokers | null = null;
    if (cfg.demo) {
      broker.start(1000);
      cleanup.unshift(async () => broker.stop());
      if (opts.simulator) demoBrokers = await opts.simulator;
      else {
        // Demo: every platform is served by the simulator's protocol front ends on loopback.
        // Loaded only in demo mode: a production process carries no simulator front ends.
        const { startSimulatedBrokers } = await import('./demo/simulated-brokers.js');
        const { inProcessBrokers } = await import('./demo/demo-brokers.js');
        const simulated = await startSimulatedBrokers(broker, '127.0.0.1');
        cleanup.unshift(simulated.close);
        demoBrokers = inProcessBrokers(broker, simulated);
      }
      endpoints = demoBrokers.endpoints;
    }
    const envOf = (e: string | null): 'demo' | 'live' => (e === 'live' ? 'live' : 'demo');
    adapters.register(
      createTradeLockerAdapterFactory({
        resolveBaseUrl: (e) => endpoints.platformb.baseUrl(envOf(e)),
        timeoutMs: cfg.brokerTimeoutMs,
      }),
    );
    const ctrader = createCTraderAdapterFactory({
      resolveEndpoint: (e) => endpoints.platformc.endpoint(envOf(e)),
      clientId: endpoints.platformc.clientId,
      clientSecret: endpoints.platformc.clientSecret,
      oauthBaseUrl: endpoints.platformc.oauthBaseUrl,
      timeoutMs: cfg.brokerTimeoutMs,
      // A refresh token works once: the new pair must be sealed and stored before anything else uses it.
      onTokensRefreshed: async (accountId, tokens) => {
        const sealed = await store.accounts.credentialsEnc(accountId);
        const current = sealed ? box.open(sealed) : {};
        await store.accounts.setCredentialsEnc(
          accountId,
          box.seal({ ...current, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken }),
        );
      },
    });
    adapters.register(ctrader);
    cleanup.unshift(() => ctrader.closeAll());
    adapters.register(
      createMetaTraderAdapterFactory({
        baseUrl: endpoints.platforma.baseUrl,
        token: endpoints.platforma.token,
        timeoutMs: cfg.brokerTimeoutMs,
        ...(endpoints.platforma.clientApiUrl ? { clientApiUrl: endpoints.platforma.clientApiUrl } : {}),
      }),
    );

    const dispatcher = new Dispatcher();
    const panic = new PanicCloseService(store, adapters, dispatcher, {
      onError: (err) => logger && logger.error({ err }, 'panic-close job step failed'),
    });
    // Shadowed Slaves get a simulated twin from every forAccount call: the registry asks the shadow mode first.
    const shadow = new ShadowService(
      store,
      adapters,
      broker,
      createSimAdapterFactory(broker, { timeoutMs: cfg.brokerTimeoutMs }),
    );
    await shadow.load();
    adapters.resolveWith(shadow.resolve);
    const risk = new RiskGuard(store, adapters, panic, {
      onError: (err) => logger && logger.warn({ err }, 'risk sample failed'),
    });
    await risk.load();
    // Every planned copy passes the risk guard's pre-trade check (daily loss at the stop, max open volume).
    const engine = new CopyEngine(store, adapters, dispatcher, {
      preTradeCheck: risk.check,
      breaker: { maxActions: cfg.masterMaxActionsPerMin, windowMs: 60_000 },
      logger,
    });
    const watcher = new Watcher(store, adapters, engine, { logger });
    const settler = new Settler(store, adapters, engine, { logger });
    engine.onUnresolved = () => settler.nudge();
    const reconciler = new Reconciler(store, adapters, engine, { logger, beforeRun: () => watcher.idle() });
    const auth = new AuthService(store, {
      accessTokenTtlSec: cfg.accessTokenTtlSec,
      apiKeyOverlapSec: cfg.apiKeyOverlapSec,
      signIn: cfg.signIn,
    });
    // Before the servers: events written from the first request on are delivered; stopped after the engine drains.
    const hooks = createWebhooks(store, box, cfg.webhooks, logger, metrics.webhookAttempt);
    hooks.start();
    cleanup.unshift(() => hooks.stop());
    const deps: ApiDeps = {
      store,
      auth,
      adapters,
      orders: new OrderService(store, adapters, engine),
      panic,
      risk,
      shadow,
      reconciler,
      instanceId,
      v1Limits: cfg.v1Limits,
      connectLimit: { max: 3, windowMs: 5 * 60_000 },
      quotas: cfg.quotas,
      webhooks: hooks.service,
      eventFeed: hooks.feed,
      streamHeartbeatMs: cfg.webhooks.streamHeartbeatMs,
      box,
      endpoints,
      ...(cfg.demo && demoBrokers
        ? { demoBrokerLogins: async () => (await import('./demo/seed.js')).demoBrokerLogins(demoBrokers!) }
        : {}),
    };
    engine.observer = metrics.copy;
    metrics.readFrom({ queueDepth: () => dispatcher.queued(), panicJobsRunning: () => panic.runningHere });
    const ops = { metrics, readiness, metricsToken: cfg.metricsToken };
    cleanup.unshift(() => adapters.closeAll());
    cleanup.unshift(() => dispatcher.drain());
    // Before the drain: a panic job stops between rounds and resumes at the next start.
    cleanup.unshift(async () => {
      await risk.stop();
      await panic.stop();
    });

    const servers: FastifyInstance[] = [];
    const split = cfg.v1Port !== null;
    const main = await buildServer(deps, { families: split ? ['r'] : ['r', 'v1'], logger, ops });
    servers.push(main);
    // Bound now, announced at the end: "listening" is logged once the service is ready (demo credentials written).
    const bound = (a: string) => `bound ${a}, starting`;
    const addr = await main.listen({ host: cfg.host, port: cfg.port, listenTextResolver: bound });
    const baseUrl = addr.replace('[::1]', 'localhost');
    let v1BaseUrl = baseUrl;
    if (split) {
      const v1 = await buildServer(deps, { families: ['v1'], logger, ops });
      servers.push(v1);
      v1BaseUrl = (await v1.listen({ host: cfg.host, port: cfg.v1Port!, listenTextResolver: bound })).replace(
        '[::1]',
        'localhost',
      );
    }
    cleanup.unshift(async () => {
      await Promise.all(servers.map((s) => s.close()));
    });
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

    if (cfg.healthIntervalMs > 0) health.start();

    // The copy engine beyond the order route: settle what the last run left unknown, then watch every Master
    // (its start diff copies what happened while down), then reconcile on a schedule.
    cleanup.unshift(async () => {
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
    if (store.database.kind === 'postgres') {
      // A sibling process may stop at any time: its keys are settled once they are older than any request.
      const sweep = setInterval(
        () => void settleKeys(store, instanceId, new Date(Date.now() - IN_FLIGHT_STALE_MS), logger),
        30_000,
      );
      sweep.unref();
      cleanup.unshift(async () => clearInterval(sweep));
    }
    await watcher.start();
    settler.start();
    reconciler.start();

    await panic.resumeRunning();
    risk.start(10_000);
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

async function settleKeys(store: Store, instanceId: string, before: Date, logger: Logger | false): Promise<void> {
  const onError = (err: unknown) => logger && logger.error({ err }, 'idempotency key left in flight not settled');
  try {
    const r = await settleInFlightKeys(store, { instanceId, before, onError });
    if (logger && r.answered + r.freed > 0)
      logger.info(r, 'idempotency keys left in flight by a stopped process settled');
  } catch (err) {
    onError(err);
  }
}
