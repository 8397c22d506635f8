import type { SimBrokerApi } from '../types.js';
import type { SimTokenStore } from './tokens.js';
import type { SimWire } from './wire.js';
import type { SimSession } from './session.js';

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
}

export interface SimServerContext {
  broker: SimBrokerApi;
  wire: SimWire;
  tokens: SimTokenStore;
  clientId: string;
  clientSecret: string;
  sessions: Set<SimSession>;
  tuning: SimServerTuning;
}
