import { createMetaTraderAdapterFactory } from '../../src/platforms/metatrader/factory.js';
import { provisionMtAccount } from '../../src/platforms/metatrader/connect.js';
import type { MetaTraderAdapter } from '../../src/platforms/metatrader/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startMetaApiSimServer } from '../../src/simulator/metaapi/server.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(platform: 'mt4' | 'mt5', hedging: boolean) {
  const broker = new SimBroker({ seed: 5 });
  const server = `SimMarkets-${platform.toUpperCase()}-Demo`;
  // Another login on the same server, so provisioning must pick the account by login.
  broker.createAccount({ balance: 3_000, meta: { server, password: 'other-pw', platform } });
  const acc = broker.createAccount({ balance: 10_000, hedging, meta: { server, password: 'mt-pw-1', platform } });
  const sim = await startMetaApiSimServer(broker);
  const provisioned = await provisionMtAccount({
    baseUrl: sim.baseUrl,
    token: sim.token,
    server,
    login: acc.login,
    password: 'mt-pw-1',
    platform,
    waitMs: 5_000,
    pollMs: 10,
  });
  const factory = createMetaTraderAdapterFactory({
    baseUrl: sim.baseUrl,
    token: sim.token,
    timeoutMs: 300,
    pollIntervalMs: 100,
  });
  const adapter = await factory.create({
    id: 'acc_test',
    brokerAccountId: provisioned.accountNumber,
    environment: null,
    credentials: {
      metaApiAccountId: provisioned.accountId,
      platform: provisioned.platform,
      server,
      login: provisioned.accountNumber,
      hedging: provisioned.hedging,
    },
  });
  await (adapter as MetaTraderAdapter).connect();
  return {
    broker,
    simAccountId: acc.id,
    adapter,
    timeoutMs: 300,
    teardown: async () => {
      await adapter.close();
      await sim.close();
    },
  };
}

runAdapterConformance('metatrader mt5 hedging (MetaApi REST over loopback)', () => harness('mt5', true));
runAdapterConformance('metatrader mt5 netting (MetaApi REST over loopback)', () => harness('mt5', false));
runAdapterConformance('metatrader mt4 (MetaApi REST over loopback)', () => harness('mt4', true));
