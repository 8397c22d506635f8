import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BridgeTokens, MemoryBridgeTokenRepo } from '../../src/auth/bridge-tokens.js';
import { attachBridgeEndpoint, BRIDGE_WS_PATH, type BridgeEndpointDeps } from '../../src/api/bridge/endpoint.js';
import { BRIDGE_POLL_PATH } from '../../src/api/bridge/poll.js';
import type { BrokerAdapter } from '../../src/platforms/adapter.js';
import { createBridgeAdapterFactory } from '../../src/platforms/bridge/factory.js';
import { BridgeHub } from '../../src/platforms/bridge/hub.js';
import { SESSION_DEFAULTS, type SessionOptions } from '../../src/platforms/bridge/session.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { pollDialer } from '../../src/simulator/ea/poll-dialer.js';
import { SimulatedEa, type SimulatedEaOptions } from '../../src/simulator/ea/sim-ea.js';

export const BRIDGE_ACCOUNT = 'acc_bridge_1';

/**
 * A bridge on loopback: the simulated broker, the endpoint on a bare HTTP server, one bridge account with a
 * token, the simulated EA connected and welcomed, and the adapter through its factory.
 */
export async function bridgeWorld(
  o: {
    hedging?: boolean;
    timeoutMs?: number;
    session?: Partial<SessionOptions>;
    ea?: Partial<SimulatedEaOptions>;
    upgradesPerMinute?: number;
    /** MT5's WebSocket (default) or MT4's long polls, held `pollWaitSec` (default 1). */
    transport?: 'ws' | 'poll';
    pollWaitSec?: number;
    endpoint?: Pick<BridgeEndpointDeps, 'poll' | 'pollsPerMinute' | 'refusedPollsPerMinute'>;
  } = {},
) {
  const broker = new SimBroker({ seed: 7 });
  const server = 'SimA-Bridge';
  const acc = broker.createAccount({ balance: 100_000, hedging: o.hedging ?? true, meta: { server } });
  const hub = new BridgeHub({ ...SESSION_DEFAULTS, ...o.session });
  const tokens = new BridgeTokens(new MemoryBridgeTokenRepo());
  const issued = await tokens.create(BRIDGE_ACCOUNT);
  const http: Server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const endpoint = attachBridgeEndpoint(http, {
    hub,
    verify: (t) => tokens.verify(t),
    loginOf: async (id) => (id === BRIDGE_ACCOUNT ? acc.login : null),
    ...(o.upgradesPerMinute !== undefined ? { upgradesPerMinute: o.upgradesPerMinute } : {}),
    ...o.endpoint,
  });
  const port = (http.address() as AddressInfo).port;
  const poll = o.transport === 'poll';
  const url = poll ? `http://127.0.0.1:${port}${BRIDGE_POLL_PATH}` : `ws://127.0.0.1:${port}${BRIDGE_WS_PATH}`;
  const transport = poll ? { dial: pollDialer({ waitSec: o.pollWaitSec ?? 1 }), terminal: 'mt4' as const } : {};
  const eaOpts = { broker, accountId: acc.id, url, token: issued.token, manualHeartbeat: true, ...transport };
  const ea = new SimulatedEa({ ...eaOpts, ...o.ea });
  ea.start();
  await ea.whenWelcomed();
  const timeoutMs = o.timeoutMs ?? 300;
  const adapter: BrokerAdapter = await createBridgeAdapterFactory({ hub, timeoutMs }).create({
    id: BRIDGE_ACCOUNT,
    brokerAccountId: acc.login,
    environment: null,
    credentials: { connection: 'bridge', login: acc.login, server },
  });
  return {
    broker,
    acc,
    hub,
    tokens,
    token: issued.token,
    tokenId: issued.id,
    url,
    ea,
    adapter,
    timeoutMs,
    link: hub.link(BRIDGE_ACCOUNT, acc.login),
    async teardown() {
      await ea.stop();
      endpoint.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}
