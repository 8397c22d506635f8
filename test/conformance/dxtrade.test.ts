import { createDxTradeAdapterFactory } from '../../src/platforms/dxtrade/factory.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startDxTradeSimServer } from '../../src/simulator/dxtrade/server.js';
import { runAdapterConformance } from './adapter-conformance.js';

function harness(hedging: boolean) {
  return async () => {
    const broker = new SimBroker({ seed: 13 });
    const meta = { username: 'trader', domain: 'default', password: 'pw-123', environment: 'demo' };
    // A second account of the same user, so the account code the adapter sends must select the right one.
    broker.createAccount({ balance: 5_000, meta, hedging });
    const acc = broker.createAccount({ balance: 10_000, meta, hedging });
    const server = await startDxTradeSimServer(broker);
    const factory = createDxTradeAdapterFactory({
      resolveBaseUrl: () => server.baseUrl,
      timeoutMs: 300,
      pollIntervalMs: 100,
    });
    const adapter = await factory.create({
      id: 'acc_test',
      brokerAccountId: `default:${acc.login}`,
      environment: 'demo',
      credentials: { ...meta, server: 'https://dx.example', account: `default:${acc.login}`, hedging },
    });
    return {
      broker,
      simAccountId: acc.id,
      adapter,
      timeoutMs: 300,
      teardown: async () => {
        await adapter.close();
        await server.close();
      },
    };
  };
}

runAdapterConformance('dxtrade (REST over loopback)', harness(true));
runAdapterConformance('dxtrade netting account (REST over loopback)', harness(false));
