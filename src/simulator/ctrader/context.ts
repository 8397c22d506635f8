import type { SimBrokerApi, SimEvent } from '../contract.js';
import type { Reply } from './server-events.js';
import type { SimRequestStats } from './request-stats.js';
import type { Scope, SimTokenStore } from './tokens.js';
import type { SimWire } from './wire.js';

export interface SimServerTuning {
  /** Idle time after which the server sends a heartbeat. */
  heartbeatMs: number;
  /** A connection silent this long (no frame, not even a heartbeat) is dropped. */
  idleTimeoutMs: number;
  /** Per-connection limits (fact sheet §7): 50 req/s, 5 req/s for historical requests. */
  rateLimitPerSecond: number;
  historicalRateLimitPerSecond: number;
  /** How often subscribed spot prices are checked and pushed when changed. */
  spotIntervalMs: number;
  /**
   * Application-authorised connections one endpoint (demo or live: separate hosts) accepts at once; the next app
   * auth is refused with CONNECTIONS_LIMIT_EXCEEDED. The real number is not documented; unlimited by default.
   */
  maxConnectionsPerApp: number;
}

export interface SimServerContext {
  broker: SimBrokerApi;
  wire: SimWire;
  tokens: SimTokenStore;
  clientId: string;
  clientSecret: string;
  sessions: Set<ClientSession>;
  tuning: SimServerTuning;
  /** Requests received, per payload type (benches read it through the control API). */
  stats: SimRequestStats;
}

export interface AuthorisedAccount {
  simAccountId: string;
  ctid: string;
  accessToken: string;
  userId: string;
  scope: Scope;
}

/**
 * One client connection as the request handlers and the server see it (session.ts implements it). Declared
 * here so the handlers need not import the session that calls them.
 */
export interface ClientSession {
  readonly ctx: SimServerContext;
  readonly environment: 'demo' | 'live';
  appAuthed: boolean;
  readonly accounts: Map<string, AuthorisedAccount>;
  /** Spot subscriptions: sim account id -> symbol -> last bid/ask sent. */
  readonly spots: Map<string, Map<string, string>>;
  send(payloadType: number, body: Record<string, unknown>, clientMsgId?: string): void;
  sendAll(replies: Reply[], clientMsgId?: string): void;
  sendError(
    errorCode: string,
    description: string,
    opts?: { clientMsgId?: string | undefined; ctid?: string | undefined; retryAfter?: number | undefined },
  ): void;
  applying<T>(simAccountId: string, fn: () => T): T;
  onSimEvent(simAccountId: string, ev: SimEvent): void;
  dropTokens(accessTokens: string[], reason: string): void;
  disconnect(reason: string): void;
  destroy(): void;
  rateLimited(payloadType: number): number | null;
}
