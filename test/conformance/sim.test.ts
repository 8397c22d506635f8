import { SimBroker } from '../../src/simulator/broker.js';
import { SimAdapter } from '../../src/platforms/sim/adapter.js';
import { runAdapterConformance } from './adapter-conformance.js';

runAdapterConformance('sim (in process)', async () => {
  const broker = new SimBroker({ seed: 11 });
  const acc = broker.createAccount({ balance: 10_000 });
  const adapter = new SimAdapter(broker, acc.id, { timeoutMs: 25 });
  return { broker, simAccountId: acc.id, adapter, teardown: () => adapter.close() };
});
