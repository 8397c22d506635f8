import { SimBroker } from '../../src/simulator/broker.js';
import { SimAdapter } from '../../src/platforms/sim/adapter.js';
import { lacking } from '../helpers/lacking.js';
import { runAdapterConformance } from './adapter-conformance.js';

const TIMEOUT_MS = 25;

function harness(o: { hedging?: boolean; lacks?: Parameters<typeof lacking>[1] } = {}) {
  return async () => {
    const broker = new SimBroker({ seed: 11 });
    const acc = broker.createAccount({ balance: 10_000, hedging: o.hedging ?? true });
    const sim = new SimAdapter(broker, acc.id, { timeoutMs: TIMEOUT_MS });
    const adapter = o.lacks ? lacking(sim, o.lacks) : sim;
    return { broker, simAccountId: acc.id, adapter, timeoutMs: TIMEOUT_MS, teardown: () => adapter.close() };
  };
}

runAdapterConformance('sim (in process)', harness());
runAdapterConformance('sim netting account (one position per symbol)', harness({ hedging: false }));
// No adapter lacks anything today; this run is where the suite's "refused, nothing sent" branches run.
runAdapterConformance(
  'sim lacking every optional write',
  harness({
    lacks: [
      'partialClose',
      'modifyPositionSlTp',
      'pendingOrders',
      'modifyPendingOrder',
      'cancelPendingOrder',
      'stopLossOnOpen',
      'takeProfitOnOpen',
      'orderHistory',
      'quotes',
    ],
  }),
);
