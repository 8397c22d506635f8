import { bridgeWorld } from '../helpers/bridge-world.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(hedging: boolean) {
  const w = await bridgeWorld({ hedging });
  return { broker: w.broker, simAccountId: w.acc.id, adapter: w.adapter, timeoutMs: w.timeoutMs, teardown: w.teardown };
}

runAdapterConformance('terminal bridge mt5 hedging (simulated EA over WebSocket)', () => harness(true));
runAdapterConformance('terminal bridge mt5 netting (simulated EA over WebSocket)', () => harness(false));
