import type { SimBrokerApi } from '../simulator/types.js';
import { startTradeLockerSimServer } from '../simulator/tradelocker/index.js';
import type { PlatformEndpoints } from '../platforms/endpoints.js';

/**
 * The simulator's protocol front ends on loopback, one per platform and environment, all over the one
 * simulated market: demo mode and tests drive the real adapters against them, as they would a real broker.
 */
export async function startSimulatedBrokers(broker: SimBrokerApi, host = '127.0.0.1'): Promise<{ endpoints: PlatformEndpoints; close(): Promise<void> }> {
  const closers: Array<() => Promise<void>> = [];
  try {
    const tlDemo = await startTradeLockerSimServer(broker, { host, environment: 'demo' });
    closers.push(tlDemo.close);
    const tlLive = await startTradeLockerSimServer(broker, { host, environment: 'live' });
    closers.push(tlLive.close);
    return {
      endpoints: { platformb: { baseUrl: (env) => (env === 'live' ? tlLive.baseUrl : tlDemo.baseUrl) } },
      close: async () => {
        await Promise.all(closers.map((c) => c()));
      },
    };
  } catch (err) {
    await Promise.all(closers.map((c) => c().catch(() => undefined)));
    throw err;
  }
}
