import { randomBytes } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { SimBrokerApi } from '../contract.js';
import { loopbackTlsMaterial } from './certs.js';
import type { SimServerContext, SimServerTuning } from './context.js';
import { ctidOf } from './ids.js';
import { startOAuthHttp } from './oauth-http.js';
import { SimRequestStats, type SimRequestStatsView } from './request-stats.js';
import { SimSession } from './session.js';
import { SimTokenStore, type Scope, type TokenPair, type TokenStoreState } from './tokens.js';
import type { Keeper } from '../keeper.js';
import { SimWire } from './wire.js';

export interface CTraderSimServerOptions extends Partial<SimServerTuning> {
  /** Loopback only; default 127.0.0.1. */
  host?: string;
  /** Port of the demo endpoint (real: demo.ctraderapi.com:5035); 0 picks a free one. */
  port?: number;
  /** Port of the live endpoint (real: live.ctraderapi.com:5035); 0 picks a free one. */
  livePort?: number;
  /** Port of the OAuth pages; 0 picks a free one. */
  oauthPort?: number;
  clientId?: string;
  clientSecret?: string;
  /** Access token lifetime; the real one is 2,628,000 s (~30 days). */
  accessTokenTtlSec?: number;
  /** OAuth tokens kept across restarts (the `copytrade simulator` process); in memory only without it. */
  keepTokens?: Keeper<TokenStoreState>;
}

export interface CTraderSimEndpoint {
  host: string;
  port: number;
}

export interface CTraderSimServer {
  host: string;
  /** The demo endpoint's port (same as endpoints.demo.port). */
  port: number;
  endpoints: { demo: CTraderSimEndpoint; live: CTraderSimEndpoint };
  /** e.g. http://127.0.0.1:PORT; the consent page is `${oauthBaseUrl}/apps/auth`, the token endpoint `${oauthBaseUrl}/apps/token`. */
  oauthBaseUrl: string;
  /** PEM of the self-signed certificate; clients pass it as `ca`. */
  ca: string;
  clientId: string;
  clientSecret: string;
  /** Test/demo hook: tokens for a cTrader ID user (sim accounts belong to it through `meta.ctidUserId`). */
  issueTokenFor(ctidUserId: string, scope?: Scope): TokenPair;
  /** The ctidTraderAccountId under which a sim account is served. */
  ctidTraderAccountIdOf(simAccountId: string): string;
  /** Open client connections (both endpoints). */
  connectionCount(): number;
  /** Requests received so far, per payload type, over both endpoints (see SimRequestStats). */
  requestStats(): SimRequestStatsView;
  close(): Promise<void>;
}

const DEFAULT_TUNING: SimServerTuning = {
  heartbeatMs: 10_000,
  idleTimeoutMs: 90_000,
  rateLimitPerSecond: 50,
  historicalRateLimitPerSecond: 5,
  spotIntervalMs: 250,
  maxConnectionsPerApp: Number.POSITIVE_INFINITY,
};

/** The cTrader Open API front end of the simulator: protobuf over TLS on loopback, plus the OAuth pages. */
export async function startCTraderSimServer(
  broker: SimBrokerApi,
  opts: CTraderSimServerOptions = {},
): Promise<CTraderSimServer> {
  const host = opts.host ?? '127.0.0.1';
  const tuning: SimServerTuning = {
    heartbeatMs: opts.heartbeatMs ?? DEFAULT_TUNING.heartbeatMs,
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_TUNING.idleTimeoutMs,
    rateLimitPerSecond: opts.rateLimitPerSecond ?? DEFAULT_TUNING.rateLimitPerSecond,
    historicalRateLimitPerSecond: opts.historicalRateLimitPerSecond ?? DEFAULT_TUNING.historicalRateLimitPerSecond,
    spotIntervalMs: opts.spotIntervalMs ?? DEFAULT_TUNING.spotIntervalMs,
    maxConnectionsPerApp: opts.maxConnectionsPerApp ?? DEFAULT_TUNING.maxConnectionsPerApp,
  };
  const tls = await loopbackTlsMaterial();
  const tokens = new SimTokenStore(opts.accessTokenTtlSec ?? 2_628_000);
  const kept = opts.keepTokens;
  if (kept) {
    if (kept.initial) tokens.restore(kept.initial);
    tokens.onChange = () => kept.save(tokens.state());
  }
  const ctx: SimServerContext = {
    broker,
    wire: new SimWire(broker),
    tokens,
    clientId: opts.clientId ?? `sim_client_${randomBytes(6).toString('hex')}`,
    clientSecret: opts.clientSecret ?? randomBytes(24).toString('base64url'),
    sessions: new Set(),
    tuning,
    stats: new SimRequestStats(),
  };
  const offTokens = tokens.onInvalidated((dead, reason) => {
    for (const s of ctx.sessions) s.dropTokens(dead, reason);
  });
  const offEvents = broker.onEvent((accountId, ev) => {
    for (const s of ctx.sessions) s.onSimEvent(accountId, ev);
  });

  const listen = async (environment: 'demo' | 'live', port: number): Promise<TlsServer> => {
    const server = createServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, (socket: TLSSocket) => {
      socket.setNoDelay(true);
      ctx.sessions.add(new SimSession(ctx, socket, environment));
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return server;
  };

  const demo = await listen('demo', opts.port ?? 0);
  const live = await listen('live', opts.livePort ?? 0);
  const oauth = await startOAuthHttp({
    host,
    port: opts.oauthPort ?? 0,
    clientId: ctx.clientId,
    clientSecret: ctx.clientSecret,
    broker,
    tokens,
  });
  const portOf = (s: TlsServer) => (s.address() as AddressInfo).port;

  return {
    host,
    port: portOf(demo),
    endpoints: { demo: { host, port: portOf(demo) }, live: { host, port: portOf(live) } },
    oauthBaseUrl: oauth.baseUrl,
    ca: tls.cert,
    clientId: ctx.clientId,
    clientSecret: ctx.clientSecret,
    issueTokenFor: (ctidUserId, scope = 'trading') => tokens.issue(ctidUserId, scope),
    ctidTraderAccountIdOf: (simAccountId) => {
      const acc = broker.account(simAccountId);
      if (!acc) throw new Error(`no simulated account ${simAccountId}`);
      return ctidOf(acc);
    },
    connectionCount: () => ctx.sessions.size,
    requestStats: () => ctx.stats.view(),
    async close() {
      offTokens();
      offEvents();
      for (const s of [...ctx.sessions]) s.destroy();
      await Promise.all([closeServer(demo), closeServer(live), closeHttp(oauth.server)]);
    },
  };
}

const closeServer = (s: TlsServer) => new Promise<void>((resolve) => s.close(() => resolve()));
const closeHttp = (s: HttpServer) =>
  new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });
