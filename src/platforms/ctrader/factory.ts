import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { CTraderAdapter } from './adapter.js';
import { CTRADER_CAPABILITIES } from './capabilities.js';
import { CTraderConnection, type CTraderEndpoint } from './connection.js';
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
 * accounts need separate connections (fact sheet §1). One connection per endpoint is shared by all accounts on it.
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
  /** Connection tuning (tests shorten these). */
  heartbeatMs?: number;
  deadAfterMs?: number;
  backoff?: { initialMs: number; maxMs: number };
}

export interface CTraderAdapterFactory extends AdapterFactory {
  /** The shared connections, keyed by host:port (tests and health checks read them). */
  connections(): ReadonlyMap<string, CTraderConnection>;
  /** Closes every connection (adapters still open stop working). */
  closeAll(): Promise<void>;
}

export function createCTraderAdapterFactory(opts: CTraderFactoryOptions): CTraderAdapterFactory {
  const pool = new Map<string, CTraderConnection>();
  const refresher = new TokenRefresher();

  const connectionFor = (endpoint: CTraderEndpoint): { key: string; conn: CTraderConnection } => {
    const key = `${endpoint.host}:${endpoint.port}`;
    let conn = pool.get(key);
    if (!conn) {
      conn = new CTraderConnection({
        endpoint,
        clientId: opts.clientId,
        clientSecret: opts.clientSecret,
        refresher,
        ...(opts.timeoutMs !== undefined ? { requestTimeoutMs: opts.timeoutMs } : {}),
        ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}),
        ...(opts.deadAfterMs !== undefined ? { deadAfterMs: opts.deadAfterMs } : {}),
        ...(opts.backoff ? { backoff: opts.backoff } : {}),
      });
      pool.set(key, conn);
    }
    return { key, conn };
  };

  return {
    platform: 'platformc',
    capabilities: CTRADER_CAPABILITIES,
    connections: () => pool,
    async closeAll() {
      const all = [...pool.values()];
      pool.clear();
      await Promise.all(all.map((c) => c.close()));
    },
    async create(account): Promise<BrokerAdapter> {
      const creds = parseCTraderCredentials(account.credentials, account.brokerAccountId);
      const { key, conn } = connectionFor(opts.resolveEndpoint(account.environment));
      const ctid = creds.ctidTraderAccountId;
      conn.addAccount(
        ctid,
        { accessToken: creds.accessToken, refreshToken: creds.refreshToken },
        {
          onTokensRefreshed: (tokens) => opts.onTokensRefreshed?.(account.id, tokens),
        },
      );
      // Lazy: the first call connects and authorises, so a broker that is down at start-up does not stop the service.
      return new CTraderAdapter({
        connection: conn,
        ctidTraderAccountId: ctid,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        onClose: async () => {
          if (conn.removeAccount(ctid) && pool.get(key) === conn) {
            pool.delete(key);
            await conn.close();
          }
        },
      });
    },
  };
}
