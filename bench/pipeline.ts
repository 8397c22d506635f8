// The simulated brokers in this process, the whole service in a child (bench/pipeline-child.ts), and a Master on
// platform C whose fills are made at the simulated broker: what the e2e and soak benchmarks drive. A Slave's fill
// is seen where it happens, at the simulated broker (its `position_opened` event), on this process's clock.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CredentialBox } from '../src/auth/credential-box.js';
import { packageRoot } from '../src/config/package-root.js';
import { withDefaults } from '../src/domain/copy-rule.js';
import { Decimal } from '../src/domain/decimal.js';
import type { Side } from '../src/domain/types.js';
import { discoverTradeLockerAccounts } from '../src/platforms/tradelocker/connect.js';
import { SimBroker } from '../src/simulator/broker.js';
import { startCTraderSimServer, type CTraderSimServer } from '../src/simulator/ctrader/server.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from '../src/simulator/tradelocker/server.js';
import { Store } from '../src/store/store.js';
import type { ChildEndpoints, ChildSample } from './pipeline-child.js';

export const SYMBOL = 'EURUSD';

export interface SlaveAt {
  /** The simulated broker's account id. */
  sim: string;
  platform: 'B' | 'C';
  /** What an adapter needs to reach it (the same credentials the service holds). */
  brokerAccountId: string;
  credentials: Record<string, string>;
}

export interface Pipeline {
  broker: SimBroker;
  tl: TradeLockerSimServer;
  ct: CTraderSimServer;
  masterSim: string;
  slaves: SlaveAt[];
  /**
   * Fills the Master at the simulated broker and resolves with each Slave's time (ms) from the Master's fill to
   * its own position event of `kind`; after `limitMs`, with those seen so far.
   */
  act(a: { kind: 'open'; side: Side } | { kind: 'close' }, limitMs: number): Promise<Map<string, number>>;
  /** Times, from `t0`, at which each Slave shows an event of `kind`, until all have or `limitMs` passed. */
  waitSlaves(kind: 'position_opened' | 'position_closed', t0: number, limitMs: number): Promise<Map<string, number>>;
  sample(): Promise<ChildSample>;
  /** The hops (ms) of every open copy the service made so far, from its ledger: plan, record, send, ack. */
  latencies(): Promise<Array<Record<string, number>>>;
  childPid: number;
  close(): Promise<void>;
}

export async function startPipeline(o: {
  b: number;
  c: number;
  seed: number;
  env?: Record<string, string>;
  /** Node flags for the service only (the deployment's, then BENCH_CHILD_ARGS: bench/deploy-runtime.ts). */
  nodeArgs?: string[];
}): Promise<Pipeline> {
  const broker = new SimBroker({ seed: o.seed });
  const tl = await startTradeLockerSimServer(broker, { environment: 'demo' });
  const ct = await startCTraderSimServer(broker);
  const dir = mkdtempSync(join(tmpdir(), 'ct-pipeline-'));
  const key = randomBytes(32);
  const box = new CredentialBox(key);
  const slaves: SlaveAt[] = [];
  let masterSim = '';
  let child: ChildProcess | null = null;
  const cleanup = async () => {
    if (child && child.exitCode === null) {
      const c = child;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.send('stop');
        setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
      });
    }
    await Promise.all([tl.close(), ct.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const store = await Store.open({ dataDir: dir });
    const user = await store.users.create('pipeline@bench.test', 'x');
    const group = await store.accounts.createGroup(user.id, 'bench');
    const common = { userId: user.id, groupId: group.id, environment: 'demo' as const, currency: 'USD' };
    const funds = { balance: new Decimal(1_000_000), equity: new Decimal(1_000_000) };
    // Each cTrader account under its own cTrader ID user; the adapter factory still puts them all on one connection
    // (one per endpoint, as the Open API allows), so they share its 50 req/s.
    const cTraderAccount = async (user: string, role: 'master' | 'slave', name: string) => {
      const sim = broker.createAccount({ balance: 1_000_000, meta: { ctidUserId: user, environment: 'demo' } });
      const tokens = ct.issueTokenFor(user);
      const ctid = ct.ctidTraderAccountIdOf(sim.id);
      const credentials = {
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        ctidTraderAccountId: ctid,
      };
      const account = await store.accounts.create({
        ...common,
        ...funds,
        platform: 'platformc',
        role,
        name,
        brokerAccountId: ctid,
        brokerAccountNumber: sim.login,
        credentialsEnc: box.seal(credentials),
      });
      return { sim, account, ctid, credentials };
    };
    masterSim = (await cTraderAccount('bench-master', 'master', 'Master')).sim.id;
    for (let i = 0; i < o.b; i++) {
      const meta = { email: `slave-b${i}@bench.test`, password: `pw-b${i}`, server: 'SIMBROKER', environment: 'demo' };
      const sim = broker.createAccount({ balance: 1_000_000, meta });
      const [a] = await discoverTradeLockerAccounts({ baseUrl: tl.baseUrl, ...meta });
      const credentials = {
        email: meta.email,
        password: meta.password,
        server: meta.server,
        accNum: String(a!.accNum),
        accountId: a!.id,
      };
      const account = await store.accounts.create({
        ...common,
        ...funds,
        platform: 'platformb',
        role: 'slave',
        name: `B${i}`,
        brokerAccountId: a!.id,
        brokerAccountNumber: a!.accountNumber,
        credentialsEnc: box.seal(credentials),
      });
      await store.accounts.setRule(account.id, withDefaults({}));
      slaves.push({ sim: sim.id, platform: 'B', brokerAccountId: a!.id, credentials });
    }
    for (let i = 0; i < o.c; i++) {
      const s = await cTraderAccount(`bench-slave-c${i}`, 'slave', `C${i}`);
      await store.accounts.setRule(s.account.id, withDefaults({}));
      slaves.push({ sim: s.sim.id, platform: 'C', brokerAccountId: s.ctid, credentials: s.credentials });
    }
    await store.close();

    const endpoints: ChildEndpoints = {
      platformb: tl.baseUrl,
      platformc: {
        host: ct.endpoints.demo.host,
        port: ct.endpoints.demo.port,
        ca: ct.ca,
        oauthBaseUrl: ct.oauthBaseUrl,
        clientId: ct.clientId,
        clientSecret: ct.clientSecret,
      },
    };
    // Port 0: the OS picks a free one (the parent talks to the child over IPC only; a random port in a fixed
    // range was once taken by another process, and the run failed with port_in_use).
    const port = 0;
    const c = spawn(
      process.execPath,
      [...(o.nodeArgs ?? []), 'dist/bench/pipeline-child.js', dir, String(port), JSON.stringify(endpoints)],
      {
        cwd: packageRoot(),
        env: {
          ...process.env,
          LOG_LEVEL: 'warn',
          COPYTRADE_SECRET_KEY: key.toString('base64'),
          // The benches' Master acts faster than the circuit breaker's default ceiling (60 actions a minute:
          // e2e's 30 opens and closes with 300 ms gaps trip it at the 61st, on a quiet machine), which is a
          // guard against loops and runaway EAs, not a part of the copy path being measured.
          COPYTRADE_MASTER_MAX_ACTIONS_PER_MIN: '0',
          ...o.env,
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    child = c;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('the service did not start within 60 s')), 60_000);
      c.on('message', (m) => {
        if (m === 'started') {
          clearTimeout(t);
          resolve();
        }
      });
      c.once('exit', (code) => reject(new Error(`the service exited (${code}) before it started`)));
    });
  } catch (err) {
    await cleanup();
    throw err;
  }

  const bySim = new Set(slaves.map((s) => s.sim));
  // One waiter at a time: the benchmarks act one after the other.
  let waiter: { kind: string; t0: number; times: Map<string, number>; done: () => void } | null = null;
  broker.onEvent((accountId, ev) => {
    if (!waiter || ev.kind !== waiter.kind || !bySim.has(accountId) || waiter.times.has(accountId)) return;
    waiter.times.set(accountId, performance.now() - waiter.t0);
    if (waiter.times.size === bySim.size) waiter.done();
  });
  const waitSlaves: Pipeline['waitSlaves'] = (kind, t0, limitMs) =>
    new Promise((resolve) => {
      const times = new Map<string, number>();
      // At the limit: the Slaves seen so far (the caller counts the missing ones).
      const t = setTimeout(() => {
        waiter = null;
        resolve(times);
      }, limitMs);
      waiter = {
        kind,
        t0,
        times,
        done: () => {
          clearTimeout(t);
          waiter = null;
          resolve(times);
        },
      };
    });
  let open: string | null = null;
  let n = 0;
  /** One question to the child, answered by a message carrying `key`. */
  const ask = <T>(key: 'sample' | 'latencies'): Promise<T> =>
    new Promise((resolve) => {
      const on = (m: unknown) => {
        if (typeof m === 'object' && m !== null && key in m) {
          child!.off('message', on);
          resolve((m as Record<string, T>)[key]!);
        }
      };
      child!.on('message', on);
      child!.send(key);
    });
  return {
    broker,
    tl,
    ct,
    masterSim,
    slaves,
    childPid: child!.pid!,
    waitSlaves,
    async act(a, limitMs) {
      if (a.kind === 'open') {
        const p = waitSlaves('position_opened', 0, limitMs);
        // Set t0 after the write: the simulator's fill is synchronous, its events go out as it returns.
        const r = broker.placeOrder(masterSim, {
          symbol: SYMBOL,
          side: a.side,
          type: 'market',
          volume: new Decimal('0.1'),
          tag: `bench-m${n++}`,
        });
        waiter!.t0 = performance.now();
        open = r.position!.id;
        return p;
      }
      if (!open) throw new Error('nothing open to close');
      const p = waitSlaves('position_closed', 0, limitMs);
      broker.closePosition(masterSim, open);
      waiter!.t0 = performance.now();
      open = null;
      return p;
    },
    sample: () => ask<ChildSample>('sample'),
    latencies: () => ask<Array<Record<string, number>>>('latencies'),
    close: cleanup,
  };
}
