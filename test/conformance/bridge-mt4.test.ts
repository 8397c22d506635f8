import { bridgeWorld } from '../helpers/bridge-world.js';
import { runAdapterConformance } from './adapter-conformance.js';

async function harness(hedging: boolean) {
  // The MT4 transport: the simulated EA polls (one poll at a time, as WebRequest allows), each held up to 1 s.
  // An event waits for the held poll to end before it leaves, so a command's round trip is up to two polls:
  // 1,500 ms, not the WebSocket's 600.
  // A connection cut between two polls is only known gone when a new hello finds it without a poll for staleMs:
  // 200 ms here (the simulated EA polls again at once), 2 s by default.
  const w = await bridgeWorld({
    hedging,
    timeoutMs: 1500,
    transport: 'poll',
    pollWaitSec: 1,
    endpoint: { poll: { staleMs: 200 } },
  });
  return { broker: w.broker, simAccountId: w.acc.id, adapter: w.adapter, timeoutMs: w.timeoutMs, teardown: w.teardown };
}

runAdapterConformance('terminal bridge mt4 hedging (simulated EA over HTTPS long polls)', () => harness(true));
runAdapterConformance('terminal bridge mt4 netting (simulated EA over HTTPS long polls)', () => harness(false));
