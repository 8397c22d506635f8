import type { Logger } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Decimal } from '../../src/domain/decimal.js';
import type { Account } from '../../src/domain/account.js';
import { withDefaults, type CopyRule } from '../../src/domain/copy-rule.js';
import { AdapterRegistry } from '../../src/engine/adapter-registry.js';
import { CopyEngine } from '../../src/engine/copy-engine.js';
import type { BreakerOptions } from '../../src/engine/circuit-breaker.js';
import { Dispatcher } from '../../src/engine/dispatcher.js';
import { Reconciler } from '../../src/engine/reconciler.js';
import { Settler } from '../../src/engine/settler.js';
import { Watcher } from '../../src/engine/watcher.js';
import type { WatcherOptions } from '../../src/engine/watch-options.js';
import { createSimAdapterFactory } from '../../src/platforms/sim/factory.js';
import type { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

/**
 * The engine as main.ts composes it (settle what was left unknown, watch, reconcile), on its own store and
 * against a simulated broker that lives outside it: stopping the engine does not stop the broker, exactly
 * like a real restart.
 */
export async function startEngine(o: {
  broker: SimBroker;
  dataDir?: string;
  databaseUrl?: string;
  timeoutMs?: number;
  clock?: () => number;
  /** How the engine waits before resending a write its broker refused for now (a clock-moving one in tests). */
  sleep?: (ms: number) => Promise<void>;
  absentAfterMs?: number;
  breaker?: BreakerOptions;
  /** The engine's logger (none by default). */
  logger?: Logger;
  reconcileYoungMs?: number;
  /** Told each statement the store sends (the store's driver hook). */
  onStatement?: (query: string) => void;
  /** The watcher's options over the harness's (its recheck after a start, its retry after a failed job). */
  watch?: Pick<WatcherOptions, 'recheckMs' | 'retryMs'>;
  /** The engine's `heldSlavesMaxAgeMs` (its default when absent). */
  heldSlavesMaxAgeMs?: number;
}) {
  const store = await Store.open({
    dataDir: o.dataDir ?? ':memory:',
    databaseUrl: o.databaseUrl,
    embeddedFsync: false,
    ...(o.onStatement ? { onStatement: o.onStatement } : {}),
  });
  const adapters = new AdapterRegistry({ open: async () => null });
  adapters.register(createSimAdapterFactory(o.broker, { timeoutMs: o.timeoutMs ?? 40 }));
  const dispatcher = new Dispatcher();
  const engine = new CopyEngine(store, adapters, dispatcher, {
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.sleep ? { sleep: o.sleep } : {}),
    ...(o.breaker ? { breaker: o.breaker } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.heldSlavesMaxAgeMs !== undefined ? { heldSlavesMaxAgeMs: o.heldSlavesMaxAgeMs } : {}),
  });
  const watcher = new Watcher(store, adapters, engine, {
    logger: false,
    resyncMs: 3_600_000,
    scanMs: 3_600_000,
    ...o.watch,
  });
  const settler = new Settler(store, adapters, engine, {
    graceMs: 0,
    everyMs: 3_600_000,
    ...(o.absentAfterMs !== undefined ? { absentAfterMs: o.absentAfterMs } : {}),
  });
  engine.onUnresolved = () => settler.nudge();
  const reconciler = new Reconciler(store, adapters, engine, {
    logger: false,
    everyMs: 3_600_000,
    beforeRun: () => watcher.idle(),
    youngMs: o.reconcileYoungMs ?? 0,
  });
  const h = {
    store,
    adapters,
    dispatcher,
    engine,
    watcher,
    settler,
    reconciler,
    started: false,
    async start() {
      await settler.runOnce({ graceMs: 0 });
      await watcher.start();
      h.started = true;
    },
    /** Everything seen so far is copied and every outcome written. */
    async idle() {
      await watcher.idle();
      await dispatcher.drain();
      await engine.flush();
    },
    /** Settles the unknown and reconciles until nothing changes (the schedule, run by hand). */
    async quiesce(masters: Account[], rounds = 4) {
      for (let i = 0; i < rounds; i++) {
        await h.idle();
        const s = await settler.runOnce({ graceMs: 0 });
        for (const m of masters) await reconciler.run((await store.accounts.byId(m.id))!, { dryRun: false });
        await h.idle();
        if (
          s.checked === 0 &&
          (await Promise.all(masters.map((m) => reconciler.run(m, { dryRun: true })))).every(
            (r) => r.drift.length === 0,
          )
        )
          return;
      }
    },
    closed: false,
    async close() {
      if (h.closed) return;
      h.closed = true;
      await watcher.stop();
      await Promise.all([reconciler.stop(), settler.stop()]);
      await dispatcher.drain();
      await engine.flush();
      await adapters.closeAll();
      await store.close();
    },
  };
  return h;
}
export type EngineHarness = Awaited<ReturnType<typeof startEngine>>;

export interface SeededGroup {
  userId: string;
  master: Account;
  masterSim: string;
  slaves: Array<{ account: Account; sim: string; rule: CopyRule }>;
}

/** A user with one copier group: a Master and Slaves on the simulated broker, each with its rule. */
export async function seedGroup(
  store: Store,
  broker: SimBroker,
  o: {
    email?: string;
    masterHedging?: boolean;
    masterBalance?: string;
    slaves: Array<{ balance?: string; rule?: Partial<CopyRule>; hedging?: boolean; currency?: string }>;
  },
): Promise<SeededGroup> {
  const email = o.email ?? `u${Math.random().toString(36).slice(2)}@example.test`;
  const user = await store.users.create(email, 'x');
  const group = await store.accounts.createGroup(user.id, 'g');
  const mSim = broker.createAccount({
    balance: o.masterBalance ?? '10000',
    hedging: o.masterHedging ?? true,
    leverage: 500,
  });
  const master = await store.accounts.create({
    userId: user.id,
    platform: 'sim',
    role: 'master',
    name: 'M',
    groupId: group.id,
    brokerAccountId: mSim.id,
    brokerAccountNumber: mSim.login,
    balance: new Decimal(o.masterBalance ?? '10000'),
    equity: new Decimal(o.masterBalance ?? '10000'),
  });
  const slaves = [];
  for (const [i, s] of o.slaves.entries()) {
    const currency = s.currency ?? 'USD';
    const sim = broker.createAccount({
      balance: s.balance ?? '10000',
      hedging: s.hedging ?? true,
      leverage: 500,
      currency,
    });
    const account = await store.accounts.create({
      userId: user.id,
      platform: 'sim',
      role: 'slave',
      name: `S${i + 1}`,
      groupId: group.id,
      brokerAccountId: sim.id,
      brokerAccountNumber: sim.login,
      currency,
      balance: new Decimal(s.balance ?? '10000'),
      equity: new Decimal(s.balance ?? '10000'),
    });
    const rule = withDefaults(s.rule);
    await store.accounts.setRule(account.id, rule);
    slaves.push({ account, sim: sim.id, rule });
  }
  return { userId: user.id, master, masterSim: mSim.id, slaves };
}

export type StoreCase = [
  name: string,
  open: () => Promise<{ databaseUrl?: string; dataDir?: string; drop(): Promise<void> }>,
];

/**
 * The engine on one of storeCases()' stores for a whole describe block: started before its tests, closed and
 * its database dropped after. The harness is read through the returned getter once beforeAll has run.
 */
export function engineOnStore(db: StoreCase[1], broker: SimBroker): () => EngineHarness {
  let h: EngineHarness | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const d = await db();
    drop = d.drop;
    h = await startEngine({ broker, ...(d.databaseUrl ? { databaseUrl: d.databaseUrl } : {}) });
  });
  afterAll(async () => {
    await h?.close();
    await drop?.();
  });
  return () => h!;
}

/**
 * The stores an engine test runs on: the embedded one always, PostgreSQL when reachable (required in CI).
 * `durable`: the embedded store lives in a temp data dir, so a test can stop the engine and start another on it.
 */
export async function storeCases(o: { durable?: boolean } = {}): Promise<StoreCase[]> {
  const embedded: StoreCase[1] = o.durable
    ? async () => {
        const dir = mkdtempSync(join(tmpdir(), 'ct-store-'));
        return { dataDir: dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
      }
    : async () => ({ drop: async () => undefined });
  const cases: StoreCase[] = [['embedded', embedded]];
  if (await requirePostgres())
    cases.push([
      'postgres',
      async () => {
        const db = await tempDatabase();
        return { databaseUrl: db.url, drop: db.drop };
      },
    ]);
  return cases;
}
