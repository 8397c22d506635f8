import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { CTraderAdapter } from './adapter.js';
import { CTRADER_CAPABILITIES } from './capabilities.js';
import { CTraderConnection, type CTraderEndpoint } from './connection.js';
import { ConnectionPools } from './connection-pools.js';
import { TokenRefresher, type CTraderTokens } from './tokens.js';

/**
 * Stored `credentials` of a platform C account (encrypted at rest by the store):
 *
 *   {
 *     accessToken: string,            // OAuth access token (≈30 days)
 *     refreshToken: string,           // single-use; replaced on every refresh (onTokensRefreshed must persist it)
 *     ctidTraderAccountId: string,    // int64 as a decimal string (a number is accepted); falls back to brokerAccountId
 *     expiresIn?: number,             // seconds, as issued
 *     isLive?: boolean,               // informative; the account row's `environment` picks the endpoint
 *     traderLogin?: string,           // account number shown to the user
 *     brokerName?: string
 *   }
 *
 * The account row's `environment` ('demo' | 'live') is turned into a host by `resolveEndpoint`; demo and live
 * accounts need separate connections (fact sheet §1). Each endpoint has a small pool of connections (see
 * createCTraderAdapterFactory); an account stays on the connection it was placed on for the adapter's life.
 */
export interface CTraderCredentials {
  accessToken: string;
  refreshToken: string;
  ctidTraderAccountId: string;
  expiresIn?: number;
  isLive?: boolean;
  traderLogin?: string;
  brokerName?: string;
}

export function parseCTraderCredentials(
  raw: Record<string, unknown> | null,
  brokerAccountId: string,
): CTraderCredentials {
  const c = raw ?? {};
  const str = (k: string) => (typeof c[k] === 'string' && (c[k] as string).length > 0 ? (c[k] as string) : null);
  const idRaw = c.ctidTraderAccountId;
  const ctid =
    typeof idRaw === 'string' && /^\d+$/.test(idRaw)
      ? idRaw
      : typeof idRaw === 'number' && Number.isSafeInteger(idRaw)
        ? String(idRaw)
        : /^\d+$/.test(brokerAccountId)
          ? brokerAccountId
          : null;
  const accessToken = str('accessToken');
  const refreshToken = str('refreshToken');
  const missing = [
    !accessToken && 'accessToken',
    !refreshToken && 'refreshToken',
    !ctid && 'ctidTraderAccountId',
  ].filter(Boolean);
  if (missing.length > 0) throw new AppError('invalid_request', `cTrader credentials lack ${missing.join(', ')}`);
  const out: CTraderCredentials = {
    accessToken: accessToken!,
    refreshToken: refreshToken!,
    ctidTraderAccountId: ctid!,
  };
  if (typeof c.expiresIn === 'number') out.expiresIn = c.expiresIn;
  if (typeof c.isLive === 'boolean') out.isLive = c.isLive;
  if (str('traderLogin')) out.traderLogin = str('traderLogin')!;
  if (str('brokerName')) out.brokerName = str('brokerName')!;
  return out;
}

export interface CTraderFactoryOptions {
  resolveEndpoint(environment: string | null): CTraderEndpoint;
  clientId: string;
  clientSecret: string;
  /** Where the OAuth pages live; kept here so the connect flow and the factory share one configuration. */
  oauthBaseUrl: string;
  /** Write answer timeout (then `unresolved`) and read timeout. */
  timeoutMs?: number;
  /** Persist refreshed tokens: the old refresh token is dead once this is called. */
  onTokensRefreshed?(accountId: string, tokens: CTraderTokens): Promise<void>;
  /**
   * A new connection to an endpoint is opened only once every one it has holds this many accounts (default 12: a
   * Master's open and its close a second later, copied to all of them, take 24 places of one connection's window
   * of 50 a second, with room for the reads; at 25, the soak's open-then-close filled the window and the last
   * copies waited for places: open p99 ~0.9 s on cTrader against ~0.2-0.5 s on TradeLocker).
   */
  accountsPerConnection?: number;
  /**
   * At most this many connections per endpoint (default 4). The server's own cap per application is not
   * documented; when it refuses one (CONNECTIONS_LIMIT_EXCEEDED), the pool's cap drops to the connections it has.
   */
  maxConnectionsPerEndpoint?: number;
  /** Connection tuning (tests shorten these). */
  heartbeatMs?: number;
  deadAfterMs?: number;
  backoff?: { initialMs: number; maxMs: number };
}

export interface CTraderAdapterFactory extends AdapterFactory {
  /** Every connection, keyed `host:port#i` (i counts the endpoint's connections opened); tests and health read them. */
  connections(): ReadonlyMap<string, CTraderConnection>;
  /** Closes every connection (adapters still open stop working). */
  closeAll(): Promise<void>;
}

/** Adapters of platform C, their accounts spread over a few connections per endpoint (see ConnectionPools). */
export function createCTraderAdapterFactory(opts: CTraderFactoryOptions): CTraderAdapterFactory {
  const refresher = new TokenRefresher();
  const pools = new ConnectionPools(
    Math.max(1, opts.accountsPerConnection ?? 12),
    Math.max(1, opts.maxConnectionsPerEndpoint ?? 4),
    (endpoint, onRefused) =>
      new CTraderConnection({
        endpoint,
        clientId: opts.clientId,
        clientSecret: opts.clientSecret,
        refresher,
        ...(opts.timeoutMs !== undefined ? { requestTimeoutMs: opts.timeoutMs } : {}),
        ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}),
        ...(opts.deadAfterMs !== undefined ? { deadAfterMs: opts.deadAfterMs } : {}),
        ...(opts.backoff ? { backoff: opts.backoff } : {}),
        onConnectionsLimit: onRefused,
      }),
  );
  return {
    platform: 'platformc',
    capabilities: CTRADER_CAPABILITIES,
    connections: () => pools.all,
    closeAll: () => pools.closeAll(),
    async create(account): Promise<BrokerAdapter> {
      const creds = parseCTraderCredentials(account.credentials, account.brokerAccountId);
      const ctid = creds.ctidTraderAccountId;
      const { pool, home } = pools.place(opts.resolveEndpoint(account.environment), ctid);
      home.conn.addAccount(
        ctid,
        { accessToken: creds.accessToken, refreshToken: creds.refreshToken },
        {
          onTokensRefreshed: (tokens) => opts.onTokensRefreshed?.(account.id, tokens),
        },
      );
      // Lazy: the first call connects and authorises, so a broker that is down at start-up does not stop the service.
      return new CTraderAdapter({
        connection: () => home.conn,
        ctidTraderAccountId: ctid,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        onClose: () => pools.release(pool, ctid, home),
      });
    },
  };
}
