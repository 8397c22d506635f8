import type { Logger } from 'pino';
import { AuthService } from '../auth/auth-service.js';
import { CredentialBox, insideDir, loadCredentialKeys } from '../auth/credential-box.js';
import { SecondFactorService } from '../auth/second-factor.js';
import { dataFile, type Config } from '../config/config.js';
import { AdapterRegistry } from '../engine/adapter-registry.js';
import { Dispatcher } from '../engine/dispatcher.js';
import { CopyEngine } from '../engine/copy-engine.js';
import { Watcher } from '../engine/watcher.js';
import { Settler } from '../engine/settler.js';
import { Reconciler } from '../engine/reconciler.js';
import { PanicCloseService } from '../engine/panic-close.js';
import { RiskGuard } from '../engine/risk/guard.js';
import { ShadowService } from '../engine/shadow.js';
import { SloEvaluator } from '../engine/slo/evaluator.js';
import { createSimAdapterFactory } from '../platforms/sim/factory.js';
import { SimBroker } from '../simulator/broker.js';
import { SimPersistence } from '../simulator/persistence.js';
import type { Store } from '../store/store.js';
import { openCoreStore } from './core-store.js';
import { backfillIdentities } from '../store/identity-backfill.js';
import { LocalBus } from '../bus/local-bus.js';
import type { Bus } from '../bus/bus.js';
import { realEndpoints, type PlatformEndpoints } from '../platforms/endpoints.js';
import { createCTraderAdapterFactory } from '../platforms/ctrader/factory.js';
import { createMetaTraderAdapterFactory, metaApiFactoryEndpoints } from '../platforms/metatrader/factory.js';
import { createBridgeAdapterFactory, withBridgeConnections } from '../platforms/bridge/factory.js';
import { BridgeHub } from '../platforms/bridge/hub.js';
import { BridgeTokens } from '../auth/bridge-tokens.js';
import { createTradeLockerAdapterFactory } from '../platforms/tradelocker/factory.js';
import { createDxTradeAdapterFactory } from '../platforms/dxtrade/factory.js';
import type { DemoBrokers } from '../demo/demo-brokers.js';
import { createWebhooks, type Webhooks } from '../webhooks/compose.js';
import { createAlerts, startedTogether, type Alerts } from '../alerts/compose.js';
import type { Fence } from '../domain/lease.js';
import type { PanicJob } from '../domain/panic-job.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { Readiness } from '../metrics/readiness.js';
import { loadReceiptKey, type ReceiptKey } from '../receipts/receipt-key.js';
import { ReceiptSealer } from '../receipts/sealer.js';

/** What every role builds on: the store, the bus, the credential box, the brokers' adapters and the copy engine. */
export interface Core {
  store: Store;
  /** The key that signs the receipts' day heads (docs/receipts.md). */
  receiptKey: ReceiptKey;
  /** The receipts' sealer loop, started by the roles that run the engine (serve, worker). */
  sealer: ReceiptSealer;
  bus: Bus;
  box: CredentialBox;
  broker: SimBroker;
  adapters: AdapterRegistry;
  endpoints: PlatformEndpoints;
  demoBrokers: DemoBrokers | null;
  dispatcher: Dispatcher;
  panic: PanicCloseService;
  shadow: ShadowService;
  risk: RiskGuard;
  /** The service-level evaluator (docs/slo.md), started with the deployment's scheduled work. */
  slo: SloEvaluator;
  engine: CopyEngine;
  watcher: Watcher;
  settler: Settler;
  reconciler: Reconciler;
  auth: AuthService;
  hooks: Webhooks;
  /** Built-in alerts (docs/alerts.md); started and stopped with `hooks`, on its event feed. */
  alerts: Alerts;
  /** This process's /metrics registry (the lease keeper sets its leases gauge here). */
  metrics: ServiceMetrics;
  /** This process's /readyz checks: store and bus here, `started` and `leases` by the roles. */
  readiness: Readiness;
  /** Shutdown steps, run first to last (each role adds its own in front). */
  cleanup: Array<() => Promise<void>>;
  /** Terminal bridge: the EA connections of this process (the endpoint attaches them) and the tokens they use. */
  bridge: { hub: BridgeHub; tokens: BridgeTokens };
}

export interface CoreOptions {
  /** See ServiceOptions.simulator in main.ts. */
  simulator?: DemoBrokers | Promise<DemoBrokers>;
  /**
   * A worker: which accounts this process owns (their leases), and the fence its ledger writes carry. The
   * watcher, settle loop and reconciler then work on owned Masters only. Absent: everything (one process).
   */
  ownership?: {
    owns: (accountId: string) => boolean;
    /** Whose ledger the settle loop settles (a Master's, from the moment its lease is taken). */
    settles: (accountId: string) => boolean;
    /** Whether a broker write of a Master's copies may leave now (CopyEngineOptions.mayWrite); default `settles`. */
    mayWrite?: (masterAccountId: string) => boolean;
    /** Whether the panic-close jobs' broker writes may leave now (the deployment lease; PanicJobOptions.mayWrite). */
    panicMayWrite?: () => boolean;
    fence: Fence;
    /** See OpenOptions.idleInTransactionMs (the lease TTL). */
    idleInTransactionMs: number;
  };
  /** An api process: panic-close jobs are handed to the worker holding the deployment lease (see PanicCloseOptions). */
  panicHandOff?: (job: PanicJob) => void;
  /**
   * Where /readyz answers (503, `store` or `bus` failing) while PostgreSQL or NATS cannot be reached at start
   * (StoreWaitOptions.probes, BusWaitOptions.probes).
   */
  waitProbes?: { host: string; port: number };
  /** Start the webhook deliverer now (default); a worker starts it under its lease instead. */
  deliverNow?: boolean;
  /** The store, already opening (openCoreStore): `serve` starts it before loading the rest of its code. */
  store?: Promise<Store>;
  /** Test hook: the clock of access token and API key lifetimes (AuthConfig.clock). */
  authClock?: () => number;
}

/** How often the embedded store's busy tables are vacuumed and analysed (see EmbeddedMaintenance). */
const EMBEDDED_MAINTENANCE_MS = 10 * 60_000;
// Intents left in copy_intents_recent this long (a crash between a record and its move) are moved by the sweep.
const INTENT_SWEEP_MS = 30_000;
// A row is sealed once it has been ended this long: a write to it that lands late (a batch committed after its
// row's updated_at) is in the receipt.
const RECEIPT_GRACE_MS = 5_000;

/**
 * The shared part of the composition: config -> one implementation per port. Nothing that reaches a broker on
 * its own schedule is started here (the watcher, settle loop, reconciler and health are the roles' to start),
 * except the demo's in-process market.
 */
export async function composeCore(cfg: Config, logger: Logger | false, opts: CoreOptions = {}): Promise<Core> {
  // Started before PostgreSQL (or in an outage), the process waits for it, not ready, instead of exiting.
  const opening =
    opts.store ??
    openCoreStore(cfg, {
      ...(opts.ownership ? { idleInTransactionMs: opts.ownership.idleInTransactionMs } : {}),
      wait: { logger, metricsToken: cfg.metricsToken, ...(opts.waitProbes ? { probes: opts.waitProbes } : {}) },
    });
  // The simulator's state is read while the embedded store opens in its worker thread: each takes about a second
  // at 10,000 `sim` accounts (the bench scale-10k), and the main thread is idle while the worker opens.
  let sim: { broker: SimBroker; persistence: SimPersistence | null };
  try {
    sim = loadSim(cfg);
  } catch (err) {
    await opening.then(
      (s) => s.close(),
      () => undefined,
    );
    throw err;
  }
  const store = await opening;
  const cleanup: Array<() => Promise<void>> = [() => store.close()];
  // The embedded store has no autovacuum: statistics now, a vacuum of the busy tables every 10 minutes (no-op on
  // PostgreSQL, whose server does its own).
  store.startMaintenance({
    everyMs: EMBEDDED_MAINTENANCE_MS,
    onError: (err) => logger && logger.warn({ err }, 'embedded store maintenance failed'),
  });
  // Intents a crash (or a failed move) left in the record's narrow table, moved to copy_intents proper.
  store.startIntentSweep({
    everyMs: INTENT_SWEEP_MS,
    olderThanMs: INTENT_SWEEP_MS,
    onError: (err) => logger && logger.warn({ err }, 'moving recorded intents to copy_intents failed'),
  });
  const metrics = new ServiceMetrics();
  const readiness = new Readiness({
    onFailure: (check, err) => logger && logger.warn({ err, check }, 'readiness check failing'),
  });
  readiness.register('store', () => store.ping());
  try {
    if (opts.ownership) store.trades.fence = opts.ownership.fence;
    const owns = opts.ownership ? { owns: opts.ownership.owns } : {};
    const settles = opts.ownership ? { owns: opts.ownership.settles } : {};
    // Cross-process signals: NATS when configured (several processes on one PostgreSQL store), else in-process.
    // NATS client loaded only when configured: a single-process start does not pay for it.
    // Started before NATS (or in an outage), the process waits for it, not ready, instead of exiting.
    const bus: Bus = cfg.natsUrl
      ? await (await import('./bus-connect.js')).connectBusWhenUp(cfg.natsUrl, {
          logger,
          readiness,
          metrics,
          metricsToken: cfg.metricsToken,
          ...(opts.waitProbes ? { probes: opts.waitProbes } : {}),
        })
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
    // Created on first use (mode 0600), beside the credential key unless COPYTRADE_RECEIPT_KEY_FILE says otherwise.
    const receiptKey = loadReceiptKey(cfg.receiptKeyFile, { create: true });
    const sealer = new ReceiptSealer(store.receipts, receiptKey, {
      everyMs: Math.max(1, cfg.receiptSealMs),
      graceMs: RECEIPT_GRACE_MS,
      onError: (err) => logger && logger.warn({ err }, 'sealing receipts failed'),
    });
    cleanup.unshift(() => sealer.stop());
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
    const { broker, persistence } = sim;
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
        const { startSimulatedBrokers } = await import('../demo/simulated-brokers.js');
        const { inProcessBrokers } = await import('../demo/demo-brokers.js');
        const simulated = await startSimulatedBrokers(broker, '127.0.0.1');
        cleanup.unshift(simulated.close);
        demoBrokers = inProcessBrokers(broker, simulated);
      }
      endpoints = demoBrokers.endpoints;
    } else if (opts.simulator) {
      // api and worker processes beside a `copytrade simulator` (tests, a try-out of scale-out): its endpoints.
      demoBrokers = await opts.simulator;
      endpoints = demoBrokers.endpoints;
    }
    const envOf = (e: string | null): 'demo' | 'live' => (e === 'live' ? 'live' : 'demo');
    adapters.register(
      createTradeLockerAdapterFactory({
        resolveBaseUrl: (e) => endpoints.platformb.baseUrl(envOf(e)),
        timeoutMs: cfg.brokerTimeoutMs,
      }),
    );
    adapters.register(
      createDxTradeAdapterFactory({
        resolveBaseUrl: (server, e) => endpoints.platformd.baseUrl(server, envOf(e)),
        timeoutMs: cfg.brokerTimeoutMs,
      }),
    );
    const ctrader = createCTraderAdapterFactory({
      resolveEndpoint: (e) => endpoints.platformc.endpoint(envOf(e)),
      clientId: endpoints.platformc.clientId,
      clientSecret: endpoints.platformc.clientSecret,
      oauthBaseUrl: endpoints.platformc.oauthBaseUrl,
      timeoutMs: cfg.brokerTimeoutMs,
      accountsPerConnection: cfg.ctraderPool.accountsPerConnection,
      maxConnectionsPerEndpoint: cfg.ctraderPool.maxConnections,
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
    // Platform A: a cloud-connected account gets the MetaApi adapter, a self-hosted one the terminal bridge's.
    const bridge = { hub: new BridgeHub(), tokens: new BridgeTokens(store.bridgeTokens) };
    adapters.register(
      withBridgeConnections(
        createMetaTraderAdapterFactory({
          ...metaApiFactoryEndpoints(endpoints.platforma),
          timeoutMs: cfg.brokerTimeoutMs,
          // Polling instead of streaming still copies, only later: the operator should know.
          onStreamState: (accountId, s) => {
            if (!logger) return;
            if (s.mode === 'polling')
              logger.warn({ metaApiAccountId: accountId, reason: s.reason }, 'platform A stream down: polling');
            else logger.info({ metaApiAccountId: accountId }, 'platform A stream synchronized');
          },
        }),
        createBridgeAdapterFactory({ hub: bridge.hub, timeoutMs: cfg.brokerTimeoutMs }),
      ),
    );

    const dispatcher = new Dispatcher();
    const panic = new PanicCloseService(store, adapters, dispatcher, {
      ...(opts.panicHandOff ? { handOff: opts.panicHandOff } : {}),
      ...(opts.ownership?.panicMayWrite ? { mayWrite: opts.ownership.panicMayWrite } : {}),
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
    const slo = new SloEvaluator(store, {
      onError: (err) => logger && logger.warn({ err }, 'service-level evaluation failed'),
    });
    // Every planned copy passes the risk guard's pre-trade check (daily loss at the stop, max open volume).
    const engine = new CopyEngine(store, adapters, dispatcher, {
      preTradeCheck: risk.check,
      breaker: { maxActions: cfg.masterMaxActionsPerMin, windowMs: 60_000 },
      heldSlavesMaxAgeMs: cfg.heldSlavesMaxAgeMs,
      ...(opts.ownership ? { mayWrite: opts.ownership.mayWrite ?? opts.ownership.settles } : {}),
      logger,
    });
    const watcher = new Watcher(store, adapters, engine, { logger, ...owns });
    const settler = new Settler(store, adapters, engine, { logger, ...settles });
    engine.onUnresolved = () => settler.nudge();
    const reconciler = new Reconciler(store, adapters, engine, { logger, beforeRun: () => watcher.idle(), ...owns });
    const auth = new AuthService(store, {
      accessTokenTtlSec: cfg.accessTokenTtlSec,
      apiKeyOverlapSec: cfg.apiKeyOverlapSec,
      signIn: cfg.signIn,
      ...(opts.authClock ? { clock: opts.authClock } : {}),
      secondFactor: new SecondFactorService(store, box, opts.authClock),
    });
    // Before the servers: events written from the first request on are delivered; stopped after the engine drains.
    const webhooks = createWebhooks(store, box, cfg.webhooks, logger, metrics.webhookAttempt);
    const alerts = createAlerts(store.alerts, webhooks.feed, box, cfg.alerts, {
      demo: cfg.demo,
      logger,
      onAttempt: metrics.alertSend,
    });
    // Alerts read the webhooks' feed and run where their deliverer runs (a worker: under the deployment lease).
    const hooks = startedTogether(webhooks, alerts);
    engine.observer = metrics.copy;
    metrics.readFrom({ queueDepth: () => dispatcher.queued(), panicJobsRunning: () => panic.runningHere });
    if (opts.deliverNow !== false) hooks.start();
    cleanup.unshift(() => hooks.stop());
    cleanup.unshift(() => adapters.closeAll());
    cleanup.unshift(() => dispatcher.drain());
    // Before the drain: a panic job stops between rounds and resumes at the next start.
    cleanup.unshift(async () => {
      await risk.stop();
      await slo.stop();
      await panic.stop();
    });
    return {
      store,
      receiptKey,
      sealer,
      bus,
      box,
      broker,
      adapters,
      endpoints,
      demoBrokers,
      dispatcher,
      panic,
      shadow,
      risk,
      slo,
      engine,
      watcher,
      settler,
      reconciler,
      auth,
      hooks,
      alerts,
      metrics,
      readiness,
      cleanup,
      bridge,
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => undefined);
    throw err;
  }
}

/** The built-in simulated broker (`sim`) with the state it left in the data dir. */
function loadSim(cfg: Config): { broker: SimBroker; persistence: SimPersistence | null } {
  const simFile = dataFile(cfg, 'simulator.json');
  const persistence = simFile ? new SimPersistence(simFile) : null;
  const snapshot = persistence?.load();
  return { broker: new SimBroker(snapshot === undefined ? {} : { snapshot }), persistence };
}
