import { createCTraderAdapterFactory } from '../../src/platforms/ctrader/factory.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startCTraderSimServer } from '../../src/simulator/ctrader/server.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(hedging = true) {
  const broker = new SimBroker({ seed: 11 });
  const meta = { ctidUserId: 'ctid-user-1', environment: 'demo' };
  // Another account of the same user (and one live), so the adapter must address the right ctidTraderAccountId.
  broker.createAccount({ balance: 5_000, meta });
  broker.createAccount({ balance: 7_000, meta: { ...meta, environment: 'live' } });
  const acc = broker.createAccount({ balance: 10_000, hedging, meta });
  const server = await startCTraderSimServer(broker);
  const tokens = server.issueTokenFor(meta.ctidUserId);
  const factory = createCTraderAdapterFactory({
    resolveEndpoint: (env) => ({ ...(env === 'live' ? server.endpoints.live : server.endpoints.demo), ca: server.ca }),
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    oauthBaseUrl: server.oauthBaseUrl,
    timeoutMs: 400,
  });
  const adapter = await factory.create({
    id: 'acc_ctrader_test',
    brokerAccountId: server.ctidTraderAccountIdOf(acc.id),
    environment: 'demo',
    credentials: { ...tokens, ctidTraderAccountId: server.ctidTraderAccountIdOf(acc.id) },
  });
  return {
    broker,
    simAccountId: acc.id,
    adapter,
    timeoutMs: 400,
    teardown: async () => {
      await adapter.close();
      await factory.closeAll();
      await server.close();
    },
  };
}

runAdapterConformance('ctrader (Open API protobuf over TLS loopback)', () => harness());
runAdapterConformance('ctrader netting account (ProtoOATrader.accountType NETTED)', () => harness(false));
