import type { SimBrokerApi } from '../simulator/contract.js';
import { startTradeLockerSimServer } from '../simulator/tradelocker/index.js';
import { startCTraderSimServer, type CTraderSimServer } from '../simulator/ctrader/index.js';
import { startMetaApiSimServer } from '../simulator/metaapi/index.js';
import { startDxTradeSimServer } from '../simulator/dxtrade/server.js';
import type { PlatformEndpoints } from '../platforms/endpoints.js';
import type { UpstreamState } from '../simulator/upstream-state.js';

export interface SimulatedBrokers {
  endpoints: PlatformEndpoints;
  /** The cTrader simulator, whose OAuth users the demo seeds. */
  ctrader: CTraderSimServer;
  close(): Promise<void>;
}

/**
 * The simulator's protocol front ends on loopback, one per platform (and environment), all over the one
 * simulated market: demo mode and tests drive the real adapters against them, as they would a real broker.
 */
export async function startSimulatedBrokers(
  broker: SimBrokerApi,
  host = '127.0.0.1',
  kept?: UpstreamState,
): Promise<SimulatedBrokers> {
  const closers: Array<() => Promise<void>> = [];
  try {
    const tlDemo = await startTradeLockerSimServer(broker, { host, environment: 'demo' });
    closers.push(tlDemo.close);
    const tlLive = await startTradeLockerSimServer(broker, { host, environment: 'live' });
    closers.push(tlLive.close);
    const dxDemo = await startDxTradeSimServer(broker, { host, environment: 'demo' });
    closers.push(dxDemo.close);
    const dxLive = await startDxTradeSimServer(broker, { host, environment: 'live' });
    closers.push(dxLive.close);
    const ct = await startCTraderSimServer(broker, { host, ...(kept ? { keepTokens: kept.keeper('ctrader') } : {}) });
    closers.push(ct.close);
    // Short provisioning phases: the demo's connection wizard should take seconds, not minutes.
    const ma = await startMetaApiSimServer(broker, {
      host,
      detectionMs: 300,
      deployMs: 300,
      connectMs: 300,
      ...(kept ? { keepAccounts: kept.keeper('metaapi') } : {}),
    });
    closers.push(ma.close);
    return {
      ctrader: ct,
      endpoints: {
        platformb: { baseUrl: (env) => (env === 'live' ? tlLive.baseUrl : tlDemo.baseUrl) },
        // Whatever server the user typed, the simulated DXtrade of that environment answers.
        platformd: { baseUrl: (_server, env) => (env === 'live' ? dxLive.baseUrl : dxDemo.baseUrl) },
        platformc: {
          endpoint: (env) => ({ ...ct.endpoints[env], ca: ct.ca }),
          oauthBaseUrl: ct.oauthBaseUrl,
          clientId: ct.clientId,
          clientSecret: ct.clientSecret,
        },
        // The adapter derives each account's region hosts from the domain lookup; `hosts` plays DNS for them.
        platforma: { baseUrl: ma.baseUrl, token: ma.token, hosts: ma.hosts },
      },
      close: async () => {
        await Promise.all(closers.map((c) => c()));
      },
    };
  } catch (err) {
    await Promise.all(closers.map((c) => c().catch(() => undefined)));
    throw err;
  }
}
