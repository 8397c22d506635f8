import { createTradeLockerAdapterFactory } from '../../src/platforms/tradelocker/factory.js';
import { discoverTradeLockerAccounts, verifyTradeLockerAccount } from '../../src/platforms/tradelocker/connect.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startTradeLockerSimServer } from '../../src/simulator/tradelocker/server.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(shuffleColumnsSeed?: number) {
  const broker = new SimBroker({ seed: 7 });
  const meta = { email: 'trader@example.com', password: 'pw-123', server: 'SIMBROKER', environment: 'demo' };
  // A second account of the same user, so the accNum the adapter sends must select the right one.
  broker.createAccount({ balance: 5_000, meta });
  const acc = broker.createAccount({ balance: 10_000, meta });
  const server = await startTradeLockerSimServer(
    broker,
    shuffleColumnsSeed === undefined ? {} : { shuffleColumnsSeed },
  );
  const accounts = await discoverTradeLockerAccounts({
    baseUrl: server.baseUrl,
    email: meta.email,
    password: meta.password,
    server: meta.server,
  });
  const picked = verifyTradeLockerAccount(accounts, { accountId: acc.login, accountNumber: `#${acc.login}` });
  const factory = createTradeLockerAdapterFactory({
    resolveBaseUrl: () => server.baseUrl,
    timeoutMs: 300,
    pollIntervalMs: 100,
  });
  const adapter = await factory.create({
    id: 'acc_test',
    brokerAccountId: picked.id,
    environment: 'demo',
    credentials: {
      email: meta.email,
      password: meta.password,
      server: meta.server,
      accNum: picked.accNum,
      accountId: picked.id,
    },
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
}

runAdapterConformance('tradelocker (REST over loopback)', () => harness());
runAdapterConformance('tradelocker (REST, shuffled columns)', () => harness(20240518));
