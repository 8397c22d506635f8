import https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { type MetaApiSimServer, startMetaApiSimServer } from '../../src/simulator/metaapi/server.js';

/**
 * The official MetaApi SDK (metaapi.cloud-sdk, a devDependency) against the simulator, unchanged: it builds its
 * own host names from its `domain` option and the simulator's domain lookup, speaks its own socket.io 2 (EIO 3)
 * with its sticky envelope, and its own RPC and synchronization. The only shim is where DNS and TLS would be: an
 * https agent that connects each host name to the simulator's loopback port for it (plain TCP). If the simulator
 * served anything on the wrong host, or in a shape the SDK does not read, an operation below fails.
 */

// The SDK's Node build is CommonJS; its ESM entry is the browser build.
const require = createRequire(import.meta.url);
const sdk = require('metaapi.cloud-sdk');
const MetaApi = sdk.default as new (
  token: string,
  opts: Record<string, unknown>,
) => {
  metatraderAccountApi: { getAccount(id: string): Promise<any> };
  close(): void;
};
/**
 * The SDK's default history storage persists to `.metaapi/` in the working directory (the repository here):
 * the same in-memory storage, with a database that keeps nothing. Storage only; the wire is untouched.
 */
class UnpersistedHistoryStorage extends sdk.MemoryHistoryStorage {
  constructor() {
    super();
    (this as unknown as { _historyDatabase: unknown })._historyDatabase = {
      loadHistory: async () => ({ deals: [], historyOrders: [] }),
      flush: async () => {},
      clear: async () => {},
    };
  }
}

describe('the official MetaApi SDK against the simulator', () => {
  let broker: SimBroker;
  let sim: MetaApiSimServer;
  let simId: string;
  let accountId: string;
  const asked = new Set<string>();
  const originalAgent = https.globalAgent;

  beforeAll(async () => {
    broker = new SimBroker({ seed: 3 });
    broker.setPrice('EURUSD', '1.08000');
    const meta = { server: 'Sdk-MT5', password: 'pw', platform: 'mt5' as const };
    const acc = broker.createAccount({ balance: 10_000, hedging: true, meta });
    simId = acc.id;
    sim = await startMetaApiSimServer(broker, { detectionMs: 5, deployMs: 5, connectMs: 5 });
    const p = await provisionMtAccount({
      baseUrl: sim.baseUrl,
      token: sim.token,
      hosts: sim.hosts,
      server: meta.server,
      login: acc.login,
      password: meta.password,
      platform: 'mt5',
      region: 'london',
      waitMs: 3_000,
      pollMs: 5,
    });
    accountId = p.accountId;
    const hosts = sim.hosts;
    // A subclass, so the agents socket.io's transports make of its constructor (`agent: false`) shim too.
    class LoopbackAgent extends https.Agent {
      override createConnection(options: { host?: string; hostname?: string }): net.Socket {
        const name = options.host ?? options.hostname ?? '';
        asked.add(name);
        const base = hosts[name];
        const u = new URL(base ?? 'http://127.0.0.1:9');
        return net.connect(Number(u.port), u.hostname);
      }
    }
    (https as { globalAgent: https.Agent }).globalAgent = new LoopbackAgent({ keepAlive: true });
    // The SDK logs every connection step to the console; the assertions say what matters.
    for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const)
      vi.spyOn(console, m).mockImplementation(() => {});
  });
  afterAll(async () => {
    (https as { globalAgent: https.Agent }).globalAgent = originalAgent;
    vi.restoreAllMocks();
    await sim?.close();
  });

  it('completes its account, RPC and streaming operations on the hosts it derives itself', async () => {
    const api = new MetaApi(sim.token, {
      domain: sim.domain,
      requestTimeout: 10,
      connectTimeout: 10,
      retryOpts: { retries: 0 },
    });
    const done: string[] = [];
    const failed: string[] = [];
    const op = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        const v = await fn();
        done.push(name);
        return v;
      } catch (err) {
        failed.push(`${name}: ${(err as Error).name}: ${(err as Error).message}`);
        return undefined;
      }
    };
    const from = new Date(Date.now() - 3_600_000);
    const to = new Date(Date.now() + 60_000);
    try {
      const account = await op('getAccount', () => api.metatraderAccountApi.getAccount(accountId));
      expect(account?.region).toBe('london');
      const rpc = account.getRPCConnection();
      await op('rpc.connect', () => rpc.connect());
      await op('rpc.waitSynchronized', () => rpc.waitSynchronized(10));
      const info = await op('rpc.getAccountInformation', () => rpc.getAccountInformation());
      expect(info).toMatchObject({ platform: 'mt5', balance: 10_000, currency: 'USD' });
      await op('rpc.getPositions', () => rpc.getPositions());
      await op('rpc.getOrders', () => rpc.getOrders());
      await op('rpc.getSymbolSpecification', () => rpc.getSymbolSpecification('EURUSD'));
      const trade = await op('rpc.createMarketBuyOrder', () => rpc.createMarketBuyOrder('EURUSD', 0.1));
      expect(trade).toMatchObject({ stringCode: 'TRADE_RETCODE_DONE' });
      const deals = await op('rpc.getDealsByTimeRange', () => rpc.getDealsByTimeRange(from, to));
      expect((deals as { deals: unknown[] }).deals).toHaveLength(1);
      await op('rpc.getHistoryOrdersByTimeRange', () => rpc.getHistoryOrdersByTimeRange(from, to));

      const streaming = account.getStreamingConnection(new UnpersistedHistoryStorage());
      await op('streaming.connect', () => streaming.connect());
      await op('streaming.waitSynchronized', () => streaming.waitSynchronized({ timeoutInSeconds: 10 }));
      expect(streaming.terminalState.positions).toHaveLength(1);
      // A change at the broker reaches the SDK's terminal state through the stream.
      const sold = broker.placeOrder(simId, {
        symbol: 'EURUSD',
        side: 'sell',
        type: 'market',
        volume: dec('0.2'),
        tag: 'sdk1',
      }).position!;
      await op('streaming.update', () =>
        vi.waitUntil(() => streaming.terminalState.positions.some((p: { id: string }) => p.id === sold.id), {
          timeout: 5_000,
        }),
      );
      await op('streaming.close', () => streaming.close());
      await op('rpc.close', () => rpc.close());
    } finally {
      api.close();
    }
    expect(failed).toEqual([]);
    expect(done).toHaveLength(15);
    // Every host it asked for is one the simulator plays: provisioning, London's client API and London's stream.
    expect([...asked].every((h) => h in sim.hosts)).toBe(true);
    expect(asked).toEqual(
      new Set([
        `mt-provisioning-api-v1.${sim.domain}`,
        `mt-client-api-v1.london.${sim.domain}`,
        `mt-client-api-v1.london-a.${sim.domain}`,
        `mt-client-api-v1.london-b.${sim.domain}`,
      ]),
    );
  });
});
