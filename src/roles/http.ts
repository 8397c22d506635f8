import type { FastifyInstance } from 'fastify';
import { routeWarmups, tradingRoute } from '../api/route-warmup.js';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { OrderService } from '../engine/order-service.js';
import { buildServer } from '../api/server.js';
import type { ApiDeps } from '../api/deps.js';
import type { Core } from './core.js';
import { EventCursors } from '../events/cursor-codec.js';
import { SignUpService } from '../auth/sign-up.js';
import { EmailSender } from '../alerts/email-sender.js';
import { attachBridgeEndpoint, bridgeLogin } from '../api/bridge/endpoint.js';

/** What the HTTP families need, from the core (`serve` and `api` alike). */
export function apiDeps(core: Core, cfg: Config, instanceId: string): ApiDeps {
  const { store, auth, adapters, engine, panic, risk, shadow, reconciler, hooks, box, endpoints, demoBrokers, bridge } =
    core;
  return {
    store,
    auth,
    adapters,
    orders: new OrderService(store, adapters, engine),
    panic,
    risk,
    shadow,
    reconciler,
    instanceId,
    v1Limits: cfg.v1Limits,
    connectLimit: { max: 3, windowMs: 5 * 60_000 },
    quotas: cfg.quotas,
    webhooks: hooks.service,
    alerts: core.alerts.service,
    ...(core.alerts.demoInbox ? { alertInbox: core.alerts.demoInbox } : {}),
    signUp: new SignUpService(
      store,
      auth,
      cfg.signUp,
      new EmailSender(cfg.alerts.smtp, cfg.alerts.timeoutMs),
      auth.throttle,
    ),
    eventFeed: hooks.feed,
    eventCursors: new EventCursors(box.derivedKeys('event cursors')),
    streamHeartbeatMs: cfg.webhooks.streamHeartbeatMs,
    box,
    endpoints,
    bridge,
    receiptKey: core.receiptKey,
    ...(cfg.demo && demoBrokers
      ? { demoBrokerLogins: async () => (await import('../demo/seed.js')).demoBrokerLogins(demoBrokers) }
      : {}),
  };
}

export interface Listening {
  baseUrl: string;
  v1BaseUrl: string;
  servers: FastifyInstance[];
}

/**
 * Binds family R (and V, unless it has a port of its own) on `cfg.port`, and V on `cfg.v1Port` when set. The
 * servers' close is added in front of `cleanup`.
 */
export async function listen(
  deps: ApiDeps,
  cfg: Config,
  logger: Logger | false,
  cleanup: Array<() => Promise<void>>,
  probes: Pick<Core, 'metrics' | 'readiness' | 'bridge' | 'store'>,
): Promise<Listening> {
  const ops = { metrics: probes.metrics, readiness: probes.readiness, metricsToken: cfg.metricsToken };
  const servers: FastifyInstance[] = [];
  cleanup.unshift(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const split = cfg.v1Port !== null;
  const main = await buildServer(deps, {
    families: split ? ['r'] : ['r', 'v1'],
    logger,
    ops,
    trustProxy: cfg.trustProxy,
  });
  servers.push(main);
  // Bound now, announced at the end: "listening" is logged once the service is ready (demo credentials written).
  const bound = (a: string) => `bound ${a}, starting`;
  const addr = await main.listen({ host: cfg.host, port: cfg.port, listenTextResolver: bound });
  // The terminal bridge's WebSocket on the API listener, behind the same TLS (docs/bridge-protocol.md).
  const bridge = attachBridgeEndpoint(main.server, {
    hub: probes.bridge.hub,
    verify: (t) => probes.bridge.tokens.verify(t),
    loginOf: (id) => bridgeLogin(probes.store, id),
  });
  cleanup.unshift(async () => bridge.close());
  const baseUrl = addr.replace('[::1]', 'localhost');
  let v1BaseUrl = baseUrl;
  if (split) {
    const v1 = await buildServer(deps, { families: ['v1'], logger, ops, trustProxy: cfg.trustProxy });
    servers.push(v1);
    v1BaseUrl = (await v1.listen({ host: cfg.host, port: cfg.v1Port!, listenTextResolver: bound })).replace(
      '[::1]',
      'localhost',
    );
  }
  // The trading routes' validators and serializers compiled now, in the background, not on a user's first order.
  for (const s of servers) void routeWarmups.get(s)?.warm(tradingRoute);
  return { baseUrl, v1BaseUrl, servers };
}
