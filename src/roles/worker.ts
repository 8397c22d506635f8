import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { DemoBrokers } from '../demo/demo-brokers.js';
import { accountLeaseKey, DEFAULT_LEASE_TTL_MS, type Fence } from '../domain/lease.js';
import { HealthMonitor } from '../engine/health/monitor.js';
import { LeaseKeeper } from '../engine/lease-keeper.js';
import type { Store } from '../store/store.js';
import { NatsBus } from '../bus/nats-bus.js';
import { OrderService } from '../engine/order-service.js';
import { composeCore, type Core } from './core.js';
import { serveOrders } from './remote-orders.js';
import { slowStepWatch } from './slow-step.js';
import { requireScaleOut } from './scale-out.js';
import { refuseBesideServe } from './serve-lease.js';

/**
 * The lease of the work that runs once per deployment, not per account: webhook delivery, the risk guard's
 * samples (which may start panic-close jobs) and resuming panic-close jobs left running.
 */
export const SCHEDULED_LEASE = 'scheduled:deployment';

/** Bus subject: an api process recorded a panic-close job (its id); the deployment lease holder runs it. */
export const PANIC_STARTED = 'panic.started';
/**
 * Bus subject: a worker lost account leases (it was paused or cut off past its TTL) and its broker writes under
 * them have ended (JSON array of account ids). A write it had started before the pause may have landed after the
 * new owner settled and resent it under a new tag: the holder reconciles those Masters now, which closes such a
 * late original (reconciler.ts), instead of at its next scheduled pass.
 */
export const LEASE_WRITES_ENDED = 'lease.writes-ended';
/** Bus subject: a worker handed leases over (rebalancing); the others run a lease round now to take them. */
export const LEASES_RELEASED = 'lease.released';

/** How long a worker that lost leases waits for its writes under them to end before it tells the new owner. */
const LOST_WRITES_WAIT_MS = 60_000;

/** The deployment lease holder also looks for running jobs this often (a lost signal, a job of a dead holder). */
const PANIC_SCAN_MS = 5_000;

export interface WorkerOptions {
  /** A lease not renewed for this long may be taken by another worker (default DEFAULT_LEASE_TTL_MS). */
  leaseTtlMs?: number;
  /** The brokers of a `copytrade simulator` process (tests, a try-out); default: the real platforms. */
  simulator?: DemoBrokers | Promise<DemoBrokers>;
  /** Serve /healthz, /readyz and /metrics on this port (`worker --port`; 0 picks one); none when absent. */
  probesPort?: number;
}

export interface Worker {
  instanceId: string;
  /** Where /healthz, /readyz and /metrics answer, when a probes port was given. */
  probesUrl: string | null;
  store: Store;
  keeper: LeaseKeeper;
  core: Core;
  /** Stops the work; `release: false` leaves the leases to run out as a killed process would (tests). */
  close(opts?: { release?: boolean }): Promise<void>;
}

/**
 * `copytrade worker`: broker connections, watchers, the copy engine, settle, reconcile and health, each for the
 * accounts whose lease this process holds; and, under one more lease, the deployment's scheduled work. A lease
 * taken over is first settled (every unresolved intent of its Master) and only then watched (the watch's start
 * diff copies what happened while nobody owned it, if still fresh) and reconciled.
 */
export async function startWorker(cfg: Config, logger: Logger | false, opts: WorkerOptions = {}): Promise<Worker> {
  requireScaleOut(cfg, 'worker');
  const instanceId = randomUUID();
  const ttlMs = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  let keeper: LeaseKeeper | null = null;
  /** The epochs this process holds: every ledger write and panic-job save of a worker is checked against them. */
  const fence: Fence = { owner: instanceId, epochOf: (key) => keeper?.epochOf(key) };
  const holds = (id: string) => keeper?.holds(accountLeaseKey(id)) ?? false;
  // Held and settled: a Master's watch, reconcile and health start only once its takeover settle is done.
  const ready = new Set<string>();
  // Being handed over to another worker: no new work starts under them (not even a settle pass).
  const draining = new Set<string>();
  const core = await composeCore(cfg, logger, {
    ...(opts.simulator ? { simulator: opts.simulator } : {}),
    deliverNow: false,
    ...(opts.probesPort !== undefined ? { waitProbes: { host: cfg.host, port: opts.probesPort } } : {}),
    ownership: {
      owns: (id) => ready.has(id) && holds(id),
      settles: (id) => holds(id) && !draining.has(id),
      mayWrite: (id) => keeper?.mayWrite(accountLeaseKey(id)) ?? false,
      // Panic-close jobs run under the deployment lease: its holder alone sends their closes and cancels.
      panicMayWrite: () => keeper?.mayWrite(SCHEDULED_LEASE) ?? false,
      fence,
      idleInTransactionMs: ttlMs,
    },
  });
  const { store, adapters, dispatcher, engine, watcher, settler, reconciler, hooks, risk, panic, cleanup } = core;
  // A panic-close job's saves, like its closes, are made only by the deployment lease's holder at its epoch.
  store.panicJobs.fence = { fence, key: SCHEDULED_LEASE };
  try {
    if (!(core.bus instanceof NatsBus)) throw new Error('a worker needs NATS (NATS_URL)');
    await refuseBesideServe(store.leases);
    // The api processes' order requests for the Masters this worker holds, answered by its own pipeline.
    const orderRoute = serveOrders(
      core.bus,
      // The Master's own write passes the same gate as its copies (lease held, with the write margin left).
      new OrderService(store, adapters, engine, Date.now, {
        mayWrite: (id) => keeper?.mayWrite(accountLeaseKey(id)) ?? false,
      }),
      holds,
      logger,
    );
    const health = new HealthMonitor(store, adapters, {
      intervalMs: cfg.healthIntervalMs,
      staleAfterMs: 3 * cfg.healthIntervalMs,
      checkTimeoutMs: Math.max(10_000, cfg.brokerTimeoutMs),
      isBusy: (id) => dispatcher.busy(id),
      lastAnswerAt: (id) => dispatcher.lastAnswerAt(id),
      owns: (id) => ready.has(id) && holds(id),
      onLongRound: (r) =>
        logger &&
        logger.warn(
          r,
          'a health round took longer than its interval: accounts are read less often (docs/scale-out.md)',
        ),
    });
    let scheduled = false;
    const resumePanics = () => {
      if (scheduled)
        void panic
          .resumeRunning()
          .catch((err: unknown) => logger && logger.error({ err }, 'panic-close resume failed'));
    };
    const offPanic = core.bus.subscribe(PANIC_STARTED, resumePanics);
    const offLateWrites = core.bus.subscribe(LEASE_WRITES_ENDED, (data) => {
      void reconcileAfterLateWrites(data).catch(
        (err: unknown) => logger && logger.error({ err }, 'reconcile after a lost lease failed'),
      );
    });
    const reconcileAfterLateWrites = async (data: string) => {
      const ids = (JSON.parse(data) as string[]).filter((id) => ready.has(id) && holds(id));
      if (ids.length === 0) return;
      // What the old owner left unknown is settled first, so its late writes meet their confirmed rows.
      await settler.runOnce();
      for (const id of ids) {
        const account = await store.accounts.byId(id);
        if (account?.role === 'master' && account.groupId) await reconciler.run(account, { dryRun: false });
      }
    };
    const panicScan = setInterval(resumePanics, PANIC_SCAN_MS);
    panicScan.unref();
    cleanup.unshift(async () => {
      offPanic();
      offLateWrites();
      clearInterval(panicScan);
    });
    let masterKeys = new Set<string>();
    const lastActive = (key: string) =>
      key.startsWith('account:') ? engine.lastCopyAt(key.slice('account:'.length)) : Number.MAX_SAFE_INTEGER;
    const writesEnded = async (ids: string[]) => {
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(ids.map((id) => engine.idle(id))),
        new Promise((r) => {
          waited = setTimeout(r, LOST_WRITES_WAIT_MS);
        }),
      ]);
      clearTimeout(waited);
      core.bus.publish(LEASE_WRITES_ENDED, JSON.stringify(ids));
    };
    const accountIds = (keys: string[]) =>
      keys.filter((k) => k.startsWith('account:')).map((k) => k.slice('account:'.length));
    const lease = new LeaseKeeper(store.leases, {
      owner: instanceId,
      ttlMs,
      logger,
      // Masters are shared out on their own (they carry the copying), Slaves on theirs, the deployment lease alone.
      group: (key) => (key === SCHEDULED_LEASE ? key : masterKeys.has(key) ? 'masters' : 'others'),
      // A Master's hand-over drains its work: two a round. Any other key has nothing to drain (see `drain`): up to
      // 500 a round, so a worker added beside one holding 10,000 accounts gets its share in a few rounds, not hours.
      givePerRound: (group) => (group === 'masters' ? 2 : 500),
      // The quietest first: nothing of theirs to drain, so their hand-over is over at once and no order waits.
      giveOrder: (keys) => [...keys].sort((a, b) => lastActive(a) - lastActive(b)),
      drain: async (keys) => {
        for (const id of accountIds(keys)) {
          draining.add(id);
          ready.delete(id);
        }
        // A Slave's key covers only its health reads (its copies are written, fenced, under its Master's key):
        // nothing to wait for. A Master's work is drained below.
        const ids = accountIds(keys.filter((k) => masterKeys.has(k)));
        if (ids.length === 0) return;
        // No new order is taken for them (the api answers 503, nothing sent); those already here are answered.
        await Promise.all(ids.map((id) => orderRoute.drain(id)));
        // Their watches stop (what the Master does from now on is the successor's start diff to copy).
        await watcher.scan();
        // A settle pass or a reconcile of theirs under way ends; later ones skip them (`settles`, `owns`).
        await settler.runOnce();
        await Promise.all(ids.map((id) => reconciler.idle(id)));
        // What was planned is sent and its outcome written while the lease still fences it.
        await Promise.all(ids.map((id) => engine.idle(id)));
        await engine.flush();
      },
      quiesce: async (keys) => {
        // Out of the fence now: no write passes the gate any more; one that passed it ends before the release.
        // (Asked of every key: a Slave's `writesEnded` resolves at once, and a key whose account turned Master
        // meanwhile is waited for too.)
        await Promise.all(accountIds(keys).map((id) => engine.writesEnded(id)));
      },
      onReleased: (keys) => {
        for (const id of accountIds(keys)) draining.delete(id);
        try {
          core.bus.publish(LEASES_RELEASED, JSON.stringify(keys));
        } catch (err) {
          // Not told: they take the keys at their next round.
          if (logger) logger.warn({ err }, 'could not tell the other workers about the handed-over leases');
        }
        if (logger) logger.info({ keys }, 'leases handed over');
      },
      wanted: async () => {
        const all = await store.accounts.all();
        const masters = all.filter((a) => a.role === 'master').map((a) => accountLeaseKey(a.id));
        masterKeys = new Set(masters);
        const others = all.filter((a) => a.role !== 'master').map((a) => accountLeaseKey(a.id));
        return [...masters, SCHEDULED_LEASE, ...others];
      },
      onAcquired: async (keys) => {
        const watch = slowStepWatch(logger, 'taking leases over');
        try {
          const ids = keys.filter((k) => k.startsWith('account:')).map((k) => k.slice('account:'.length));
          if (ids.length > 0) {
            // As on a restart: what the last owner left unknown is settled before anything new is planned.
            // A pass already running may have started before the lease: wait for it, then one that sees the new keys.
            watch.step('settling what the last owner left');
            await settler.runOnce();
            await settler.runOnce({ graceMs: 0 });
            for (const id of ids) {
              draining.delete(id);
              ready.add(id);
              orderRoute.attach(id);
            }
            watch.step('watching the Masters taken');
            await watcher.scan();
            void reconciler.runAll().catch((err: unknown) => logger && logger.error({ err }, 'reconcile failed'));
            if (logger) logger.info({ accounts: ids.length }, 'leases taken: accounts settled and watched');
          }
          if (keys.includes(SCHEDULED_LEASE) && !scheduled) {
            scheduled = true;
            hooks.start();
            risk.start(10_000);
            if (cfg.sloEvaluateMs > 0) core.slo.start(cfg.sloEvaluateMs);
            watch.step('resuming panic-close jobs');
            await panic.resumeRunning();
            if (logger) logger.info('lease taken: webhook delivery, risk samples and panic-close jobs run here');
          }
        } finally {
          watch.done();
        }
      },
      onLost: async (keys) => {
        const watch = slowStepWatch(logger, 'stopping the work under lost leases');
        watch.step('detaching the order route');
        try {
          for (const k of keys)
            if (k.startsWith('account:')) {
              ready.delete(k.slice('account:'.length));
              draining.delete(k.slice('account:'.length));
              orderRoute.detach(k.slice('account:'.length));
            }
          watch.step('stopping the watches of lost Masters');
          // The lost Masters' watches stop; their ledger writes are refused by the store already (fence).
          await watcher.scan();
          const lostIds = keys.filter((k) => k.startsWith('account:')).map((k) => k.slice('account:'.length));
          // Once our writes under them end (refused at the wire, or landed late), the new owner looks again. Not
          // awaited: takeovers queued behind this loss must not wait for a slow broker.
          if (lostIds.length > 0)
            void writesEnded(lostIds).catch(
              (err: unknown) => logger && logger.error({ err }, 'telling the new owners about late writes failed'),
            );
          if (keys.includes(SCHEDULED_LEASE) && scheduled) {
            scheduled = false;
            watch.step('stopping webhook delivery, risk samples and panic-close jobs');
            await Promise.all([hooks.stop(), risk.stop(), core.slo.stop(), panic.stop()]);
          }
        } finally {
          watch.done();
        }
        if (logger) logger.warn({ keys }, 'work under lost leases stopped');
      },
    });
    keeper = lease;
    // A sibling handed leases over: a round now, not at the next tick, so the Masters go unserved only briefly.
    const offReleased = core.bus.subscribe(LEASES_RELEASED, () => lease.nudge());
    cleanup.unshift(async () => offReleased());
    let leasing = false;
    // Ready once the keeper has taken its first round (a worker holding no lease is still ready: more workers
    // than work), and no longer once it stops.
    core.readiness.register('leases', async () => {
      if (!leasing) throw new Error('lease keeper not running');
    });
    core.metrics.readFrom({ leasesHeld: () => lease.heldKeys().length });
    let probesUrl: string | null = null;
    if (opts.probesPort !== undefined) {
      const { startOpsListener } = await import('../api/ops-server.js');
      const probes = await startOpsListener(
        { metrics: core.metrics, readiness: core.readiness, metricsToken: cfg.metricsToken },
        { host: cfg.host, port: opts.probesPort, logger },
      );
      probesUrl = probes.url;
      cleanup.push(() => probes.close());
    }
    let release = true;
    let closed: Promise<void> | null = null;
    // Shutdown: stop taking, stop the work, drain, then release at once so a sibling takes over without the TTL.
    cleanup.unshift(async () => {
      leasing = false;
      // Copies waiting to send again after a 429 stop waiting: the leases' next holders settle them by tag.
      engine.retrying.stop();
      await lease.stop();
      orderRoute.detachAll();
      await watcher.stop();
      await Promise.all([reconciler.stop(), settler.stop(), health.stop()]);
      await dispatcher.drain();
      await engine.flush();
      if (release) {
        await lease.releaseAll();
        // The others take them at once, not at their next round.
        try {
          core.bus.publish(LEASES_RELEASED, '[]');
        } catch (err) {
          if (logger) logger.warn({ err }, 'could not tell the other workers about the released leases');
        }
      }
    });
    await watcher.start();
    settler.start();
    reconciler.start();
    // Every worker may seal: appends to one chain are serialised by its row lock (docs/receipts.md).
    if (cfg.receiptSealMs > 0) core.sealer.start();
    if (cfg.healthIntervalMs > 0) health.start();
    await lease.start();
    leasing = true;
    if (logger) logger.info({ instanceId, leases: lease.heldKeys().length }, 'worker started');
    return {
      instanceId,
      probesUrl,
      store,
      keeper: lease,
      core,
      close(o = {}) {
        if (!closed) {
          release = o.release ?? true;
          closed = (async () => {
            for (const step of cleanup)
              await step().catch((err: unknown) => logger && logger.error({ err }, 'shutdown step failed'));
          })();
        }
        return closed;
      },
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => undefined);
    throw err;
  }
}
