import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialBox } from '../../src/auth/credential-box.js';
import { loadConfig } from '../../src/config/config.js';
import { connectSimulator, type ExternalSimulator } from '../../src/demo/simulator-client.js';
import type { DemoSimAccount } from '../../src/demo/demo-brokers.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { brokerIdentity } from '../../src/domain/broker-identity.js';
import { Decimal } from '../../src/domain/decimal.js';
import { accountLeaseKey } from '../../src/domain/lease.js';
import { startService } from '../../src/main.js';
import { listAccountsForToken } from '../../src/platforms/ctrader/oauth.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import { discoverTradeLockerAccounts } from '../../src/platforms/tradelocker/connect.js';
import { Store } from '../../src/store/store.js';
import { cli, exited, firstJson } from './cli-process.js';
import { tempDatabase } from './postgres.js';

export type SlavePlatform = 'platforma' | 'platformb' | 'platformc';

export interface ChaosSlave {
  id: string;
  platform: SlavePlatform;
  /** The simulator's account id (control API `/accounts/{id}/positions`). */
  simId: string;
  multiplier: string;
}

export interface SimBookDeal {
  id: string;
  positionId: string;
  entry: 'in' | 'out';
  side: 'buy' | 'sell';
  volume: string;
  time: string;
  tag: string | null;
}

export interface Deployment {
  store: Store;
  sim: ExternalSimulator;
  endpointsFile: string;
  control: { url: string; token: string };
  apiKey: string;
  /** The platform A (MetaApi-style) Master of the group the test drives, and its MetaApi account id. */
  masterId: string;
  masterMetaApiId: string;
  masterSimId: string;
  groupId: string;
  slaves: ChaosSlave[];
  /** Environment of the api and worker processes (DATABASE_URL, NATS_URL, key, lease TTL). */
  roleEnv: Record<string, string>;
  workers: Map<string, ChildProcess>;
  /** The workers' log lines (warn and above), newest last, each prefixed with its worker's id: what a failed run prints. */
  workerLog: string[];
  startWorker(): Promise<string>;
  startApi(): Promise<string>;
  /** SIGKILL the api process that answers at `baseUrl` and wait until it is gone. */
  killApi(baseUrl: string): Promise<void>;
  /** SIGSTOP / SIGCONT a worker: a process paused past its lease, as a long GC pause or a frozen VM would. */
  pauseWorker(id: string): void;
  resumeWorker(id: string): void;
  /** SIGKILL (or SIGTERM) a worker by instance id and wait until it is gone. */
  stopWorker(id: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** The worker holding a lease key, if any and not stopped (possibly one still starting, not yet in `workers`). */
  ownerOf(key: string): Promise<string | undefined>;
  masterOwner(): Promise<string | undefined>;
  positionsOf(simId: string): Promise<Array<{ id: string; symbol: string; volume: string; tag: string | null }>>;
  /** The simulator's own record of an account's executions, oldest first. */
  dealsOf(simId: string): Promise<SimBookDeal[]>;
  close(): Promise<void>;
}

const MULTIPLIERS = ['1', '0.5', '2'];

/**
 * The scale-out deployment as operations runs it, for the process-level tests and the benchmark: a
 * `copytrade simulator`, the demo seeded once by a `serve --demo` on a fresh PostgreSQL database, then extra Slaves
 * on the three platforms added to the demo's platform A Master group, and api/worker processes started on demand.
 * `natsUrl` is what the api and workers are given (a proxy, for a test that cuts the connection).
 */
export async function startDeployment(o: {
  natsUrl: string;
  leaseTtlMs: number;
  slavesPerPlatform: number;
  brokerTimeoutMs?: number;
  /** A PostgreSQL server of the caller's own (one it may restart); the machine's shared one by default. */
  pgAdminUrl?: string;
}): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), 'ct-deploy-'));
  const db = await tempDatabase(o.pgAdminUrl);
  const key = randomBytes(32);
  const env = {
    DATABASE_URL: db.url,
    NATS_URL: o.natsUrl,
    COPYTRADE_SECRET_KEY: key.toString('base64'),
    COPYTRADE_BROKER_TIMEOUT_MS: String(o.brokerTimeoutMs ?? 3000),
    LOG_LEVEL: 'warn',
  };
  const simProc = cli(['simulator', '--data-dir', join(dir, 'sim'), '--json'], env);
  const endpointsFile = (await firstJson<{ endpointsFile: string }>(simProc, 'endpointsFile')).endpointsFile;
  const control = JSON.parse(readFileSync(endpointsFile, 'utf8')).control as { url: string; token: string };
  const sim = await connectSimulator(endpointsFile);
  const seeder = await startService(
    loadConfig(
      { dataDir: ':memory:', port: '0', demo: true },
      // No bridge account: the EA link is served by `serve` only, never by the workers of a process deployment.
      { ...process.env, ...env, COPYTRADE_HEALTH_INTERVAL_MS: '0', COPYTRADE_DEMO_BRIDGE: '0' },
    ),
    false,
    { simulator: sim },
  );
  const apiKey = seeder.demo!.apiKey;
  await seeder.close();
  const store = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
  const all = await store.accounts.all();
  const master = all.find((a) => a.role === 'master' && a.platform === 'platforma')!;
  const slaves = await addSlaves(store, sim, new CredentialBox(key), master, o.slavesPerPlatform);
  const roleEnv = { ...env, COPYTRADE_LEASE_TTL_MS: String(o.leaseTtlMs) };
  const workers = new Map<string, ChildProcess>();
  const workerLog: string[] = [];
  const apis = new Map<string, ChildProcess>();

  const positionsOf = async (simId: string) => {
    const res = await fetch(`${control.url}/accounts/${encodeURIComponent(simId)}/positions`, {
      headers: { authorization: `Bearer ${control.token}` },
    });
    return (await res.json()) as Array<{ id: string; symbol: string; volume: string; tag: string | null }>;
  };
  const dealsOf = async (simId: string) => {
    const res = await fetch(`${control.url}/accounts/${encodeURIComponent(simId)}/deals`, {
      headers: { authorization: `Bearer ${control.token}` },
    });
    return (await res.json()) as SimBookDeal[];
  };
  /** Workers this deployment stopped: a lease they held stays live until its TTL runs out, yet nobody works it. */
  const gone = new Set<string>();
  const ownerOf = async (key: string) => {
    const l = (await store.leases.live()).find((x) => x.key === key);
    return l && !gone.has(l.owner) ? l.owner : undefined;
  };
  return {
    store,
    sim,
    endpointsFile,
    control,
    apiKey,
    masterId: master.id,
    masterMetaApiId: master.brokerAccountId,
    masterSimId: (await sim.accounts()).find((x) => x.meta.demoKey === 'a-master')!.id,
    groupId: master.groupId!,
    slaves,
    roleEnv,
    workers,
    workerLog,
    dealsOf,
    async startWorker() {
      const w = cli(['worker', '--simulator', endpointsFile, '--json'], roleEnv);
      const id = (await firstJson<{ instanceId: string }>(w, 'instanceId')).instanceId;
      workers.set(id, w);
      for (const s of [w.stdout, w.stderr])
        if (s)
          createInterface({ input: s }).on('line', (line) => {
            if (!line.includes('"level":') || /"level":(30|20|10)\b/.test(line)) return;
            workerLog.push(`${id} ${line.slice(0, 2000)}`);
            if (workerLog.length > 2000) workerLog.splice(0, workerLog.length - 2000);
          });
      return id;
    },
    async startApi() {
      const api = cli(['api', '--port', '0', '--simulator', endpointsFile, '--json'], roleEnv);
      const { baseUrl } = await firstJson<{ baseUrl: string }>(api, 'baseUrl');
      apis.set(baseUrl, api);
      return baseUrl;
    },
    async killApi(baseUrl) {
      const api = apis.get(baseUrl)!;
      api.kill('SIGKILL');
      await exited(api);
      apis.delete(baseUrl);
    },
    pauseWorker(id) {
      workers.get(id)!.kill('SIGSTOP');
    },
    resumeWorker(id) {
      workers.get(id)!.kill('SIGCONT');
    },
    async stopWorker(id, signal) {
      const w = workers.get(id)!;
      w.kill(signal);
      gone.add(id);
      await exited(w);
      workers.delete(id);
    },
    ownerOf,
    masterOwner: () => ownerOf(accountLeaseKey(master.id)),
    positionsOf,
    async close() {
      await store.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Slaves on platforms A, B and C in the Master's group, each with a multiplier rule, made the way the demo seeding
 * makes its own: an account at the simulator, linked through the platform's own connect calls, stored sealed.
 */
async function addSlaves(
  store: Store,
  sim: ExternalSimulator,
  box: CredentialBox,
  master: { userId: string; groupId: string | null },
  perPlatform: number,
): Promise<ChaosSlave[]> {
  const base = { currency: 'USD', hedging: true, leverage: 100, balance: '100000' };
  const common = {
    userId: master.userId,
    role: 'slave' as const,
    groupId: master.groupId!,
    environment: 'demo' as const,
    balance: new Decimal(base.balance),
    equity: new Decimal(base.balance),
    currency: 'USD',
  };
  const ctidUser = 'chaos-ctid-user';
  const made: Array<Omit<ChaosSlave, 'multiplier'>> = [];
  const ep = sim.endpoints;
  const create = (meta: Record<string, string>) => sim.createAccount({ ...base, meta });
  const cSims: DemoSimAccount[] = [];
  for (let i = 0; i < perPlatform; i++)
    cSims.push(
      await create({ demoKey: `chaos-c-${i}`, ctidUserId: ctidUser, environment: 'demo', brokerName: 'SIMC' }),
    );
  const tokens = await sim.issueCTraderToken(ctidUser);
  const listed = (
    await listAccountsForToken({
      endpoint: ep.platformc.endpoint('demo'),
      clientId: ep.platformc.clientId,
      clientSecret: ep.platformc.clientSecret,
      accessToken: tokens.accessToken,
    })
  ).accounts;
  for (const s of cSims) {
    const l = listed.find((a) => a.ctidTraderAccountId === s.ctidTraderAccountId)!;
    const a = await store.accounts.create({
      ...common,
      platform: 'platformc',
      name: `Chaos C ${s.login}`,
      brokerAccountId: s.ctidTraderAccountId!,
      brokerAccountNumber: l.traderLogin ?? s.login,
      brokerName: l.brokerName,
      credentialsEnc: box.seal({
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        ctidTraderAccountId: s.ctidTraderAccountId,
        traderLogin: l.traderLogin,
      }),
    });
    made.push({ id: a.id, platform: 'platformc', simId: s.id });
  }
  const aMade = await Promise.all(
    Array.from({ length: perPlatform }, async (_, i) => {
      const password = randomBytes(6).toString('base64url');
      const s = await create({
        demoKey: `chaos-a-${i}`,
        server: 'SimA-Demo',
        password,
        platform: 'mt5',
        broker: 'SimA',
      });
      const p = await provisionMtAccount({
        ...ep.platforma,
        server: 'SimA-Demo',
        login: s.login,
        password,
        platform: 'mt5',
        pollMs: 100,
        waitMs: 30_000,
      });
      return { s, p };
    }),
  );
  for (const { s, p } of aMade) {
    const a = await store.accounts.create({
      ...common,
      platform: 'platforma',
      name: `Chaos A ${p.accountNumber}`,
      brokerAccountId: p.accountId,
      brokerAccountNumber: p.accountNumber,
      brokerName: p.broker,
      brokerIdentity: brokerIdentity({ platform: 'platforma', server: 'SimA-Demo', accountId: p.accountNumber }),
      credentialsEnc: box.seal({
        metaApiAccountId: p.accountId,
        platform: p.platform,
        server: p.server,
        login: p.accountNumber,
        hedging: p.hedging,
        region: p.region,
      }),
    });
    made.push({ id: a.id, platform: 'platforma', simId: s.id });
  }
  for (let i = 0; i < perPlatform; i++) {
    // One broker login per account, as separate traders have (each login has its own rate limit).
    const login = {
      email: `chaos-${i}@broker-b.example`,
      password: randomBytes(6).toString('base64url'),
      server: 'SIMB-Demo',
    };
    const s = await create({ demoKey: `chaos-b-${i}`, ...login, environment: 'demo' });
    const found = (await discoverTradeLockerAccounts({ baseUrl: ep.platformb.baseUrl('demo'), ...login })).find(
      (x) => x.id === s.id || x.accountNumber === s.login,
    )!;
    const a = await store.accounts.create({
      ...common,
      platform: 'platformb',
      name: `Chaos B ${found.accountNumber}`,
      brokerAccountId: found.id,
      brokerAccountNumber: found.accountNumber,
      brokerName: login.server,
      credentialsEnc: box.seal({ ...login, accNum: found.accNum, accountId: found.id }),
    });
    made.push({ id: a.id, platform: 'platformb', simId: s.id });
  }
  // The demo's own Slaves of this group (platform C) get a multiplier rule too, so every Slave's size is checkable.
  const sims = await sim.accounts();
  for (const a of await store.accounts.all())
    if (a.role === 'slave' && a.groupId === master.groupId && !made.some((m) => m.id === a.id)) {
      const s = sims.find((x) => x.ctidTraderAccountId === a.brokerAccountId)!;
      made.push({ id: a.id, platform: 'platformc', simId: s.id });
    }
  const out: ChaosSlave[] = [];
  for (const [i, m] of made.entries()) {
    const multiplier = MULTIPLIERS[i % MULTIPLIERS.length]!;
    await store.accounts.setRule(m.id, withDefaults({ sizing: { mode: 'multiplier', multiplier } }));
    out.push({ ...m, multiplier });
  }
  return out;
}
