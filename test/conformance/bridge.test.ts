import { bridgeWorld } from '../helpers/bridge-world.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(hedging: boolean) {
  // 600 ms, not the REST platforms' 300: a command crosses two WebSocket hops and the simulated EA's own loop, and
  // CI at load 16 saw a confirmed write answer after 300 ms (a timeout case waits 3x this, so it is kept low).
  const w = await bridgeWorld({ hedging, timeoutMs: 600 });
  return { broker: w.broker, simAccountId: w.acc.id, adapter: w.adapter, timeoutMs: w.timeoutMs, teardown: w.teardown };
}

runAdapterConformance('terminal bridge mt5 hedging (simulated EA over WebSocket)', () => harness(true));
runAdapterConformance('terminal bridge mt5 netting (simulated EA over WebSocket)', () => harness(false));
