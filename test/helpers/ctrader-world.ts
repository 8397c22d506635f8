import { afterEach } from 'vitest';
import type { BrokerAdapter, BrokerEvent } from '../../src/platforms/adapter.js';
import {
  createCTraderAdapterFactory,
  type CTraderAdapterFactory,
  type CTraderFactoryOptions,
} from '../../src/platforms/ctrader/factory.js';
import { SimBroker } from '../../src/simulator/broker.js';
import {
  startCTraderSimServer,
  type CTraderSimServer,
  type CTraderSimServerOptions,
} from '../../src/simulator/ctrader/server.js';

/**
 * cTrader Slaves of one cTrader ID user through the real wire: a simulated broker, its Open API server and our
 * adapter factory, timings short enough for tests. Worlds made in a test are closed after it.
 */

export interface CTraderSlave {
  simAccountId: string;
  adapter: BrokerAdapter;
  events: BrokerEvent[];
}

export interface CTraderWorld {
  broker: SimBroker;
  server: CTraderSimServer;
  factory: CTraderAdapterFactory;
  slaves: CTraderSlave[];
  addSlave(): Promise<CTraderSlave>;
}

const worlds: CTraderWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    for (const s of w.slaves) await s.adapter.close();
    await w.factory.closeAll();
    await w.server.close();
  }
});

export async function ctraderWorld(
  n: number,
  opts: { seed?: number; factory?: Partial<CTraderFactoryOptions>; server?: CTraderSimServerOptions } = {},
): Promise<CTraderWorld> {
  const broker = new SimBroker({ seed: opts.seed ?? 7 });
  broker.setPrice('EURUSD', '1.08000');
  const server = await startCTraderSimServer(broker, { heartbeatMs: 200, ...opts.server });
  const tokens = server.issueTokenFor('u1');
  const factory = createCTraderAdapterFactory({
    resolveEndpoint: () => ({ ...server.endpoints.demo, ca: server.ca }),
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    oauthBaseUrl: server.oauthBaseUrl,
    // Generous: 50 accounts' set-up may queue behind one rate window of 50 a second.
    timeoutMs: 10_000,
    heartbeatMs: 100,
    deadAfterMs: 2_000,
    backoff: { initialMs: 40, maxMs: 400 },
    ...opts.factory,
  });
  const w: CTraderWorld = {
    broker,
    server,
    factory,
    slaves: [],
    async addSlave() {
      const acc = broker.createAccount({ balance: 10_000, meta: { ctidUserId: 'u1', environment: 'demo' } });
      const ctid = server.ctidTraderAccountIdOf(acc.id);
      const adapter = await factory.create({
        id: `acc_${w.slaves.length}`,
        brokerAccountId: ctid,
        environment: 'demo',
        credentials: { ...tokens, ctidTraderAccountId: ctid },
      });
      const events: BrokerEvent[] = [];
      adapter.subscribe?.((ev) => events.push(ev));
      const s = { simAccountId: acc.id, adapter, events };
      w.slaves.push(s);
      return s;
    },
  };
  worlds.push(w);
  for (let i = 0; i < n; i++) await w.addSlave();
  return w;
}

/** What a start does: symbols, then the positions read (which is what makes the position view trusted). */
export async function warmCTrader(w: CTraderWorld): Promise<void> {
  await Promise.all(w.slaves.map((s) => s.adapter.instrument('EURUSD')));
  await Promise.all(w.slaves.map((s) => s.adapter.listPositions()));
}

/** Requests the simulator received, by message name, since `before`. */
export function sentSince(w: CTraderWorld, before: Record<string, { count: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, c] of Object.entries(w.server.requestStats().requests)) {
    const d = c.count - (before[name]?.count ?? 0);
    if (d > 0) out[name] = d;
  }
  return out;
}

/**
 * A warmed world of `n` cTrader Slaves (seeded prices), for the close and amendment tests:
 * `accountsPerConnection` keeps them on one connection when a test is about one rate window.
 */
export async function warmCTraderWorld(n = 1, accountsPerConnection?: number): Promise<CTraderWorld> {
  const w = await ctraderWorld(n, {
    seed: 5,
    factory: accountsPerConnection !== undefined ? { accountsPerConnection } : {},
  });
  await warmCTrader(w);
  return w;
}
