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

/** One endpoint's connections, and where each adapter's account is now. */
interface EndpointPool {
  endpoint: CTraderEndpoint;
  name: string;
  conns: Map<string, CTraderConnection>;
  /** Lowered when the server refuses a connection for the application. */
  cap: number;
  opened: number;
  /** By ctidTraderAccountId: the connection the account is on now, shared by its adapters. */
  homes: Map<string, { conn: CTraderConnection; adapters: number }>;
}

/**
 * Accounts of one endpoint are spread over a few connections, each with its own rate window (50 requests a
 * second; fact sheet §7): a fan-out to 50 Slaves on one connection paid a second for its last 25 copies (issue 12).
 * An account goes to the connection with the fewest accounts; a new one is opened only when all are at
 * `accountsPerConnection` and the cap allows, so a few accounts still share one connection.
 */
export function createCTraderAdapterFactory(opts: CTraderFactoryOptions): CTraderAdapterFactory {
  const perConnection = Math.max(1, opts.accountsPerConnection ?? 12);
  const maxConnections = Math.max(1, opts.maxConnectionsPerEndpoint ?? 4);
  const pools = new Map<string, EndpointPool>();
  const all = new Map<string, CTraderConnection>();
  const refresher = new TokenRefresher();

  const open = (pool: EndpointPool): CTraderConnection => {
    const key = `${pool.name}#${pool.opened++}`;
    const conn: CTraderConnection = new CTraderConnection({
      endpoint: pool.endpoint,
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
      refresher,
      ...(opts.timeoutMs !== undefined ? { requestTimeoutMs: opts.timeoutMs } : {}),
      ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}),
      ...(opts.deadAfterMs !== undefined ? { deadAfterMs: opts.deadAfterMs } : {}),
      ...(opts.backoff ? { backoff: opts.backoff } : {}),
      onConnectionsLimit: () => refused(pool, key, conn),
    });
    pool.conns.set(key, conn);
    all.set(key, conn);
    return conn;
  };

  const drop = (pool: EndpointPool, key: string, conn: CTraderConnection): Promise<void> => {
    if (pool.conns.get(key) !== conn) return Promise.resolve();
    pool.conns.delete(key);
    all.delete(key);
    return conn.close();
  };

  const fewest = (conns: Iterable<CTraderConnection>): CTraderConnection | null => {
    let best: CTraderConnection | null = null;
    for (const c of conns) if (!best || c.accountCount() < best.accountCount()) best = c;
    return best;
  };

  /**
   * The server has no room for this connection: keep the pool to the ones it has, and move this one's accounts
   * onto them (they were never authorised here, or lost that with the link). Alone, it keeps retrying as any
   * connection refused at start-up does: the other connections holding the application's room may go away.
   */
  const refused = (pool: EndpointPool, key: string, conn: CTraderConnection): void => {
    const others = [...pool.conns.values()].filter((c) => c !== conn);
    if (others.length === 0 || pool.conns.get(key) !== conn) return;
    pool.cap = Math.min(pool.cap, others.length);
    for (const ctid of conn.accountIds()) {
      const to = fewest(others)!;
      conn.handOver(ctid, to);
      const home = pool.homes.get(ctid);
      if (home?.conn === conn) home.conn = to;
    }
    void drop(pool, key, conn);
  };

  const place = (endpoint: CTraderEndpoint, ctid: string) => {
    const name = `${endpoint.host}:${endpoint.port}`;
    let pool = pools.get(name);
    if (!pool) {
      pool = { endpoint, name, conns: new Map(), cap: maxConnections, opened: 0, homes: new Map() };
      pools.set(name, pool);
    }
    // An account already open here stays on its connection: one authorisation, one stream of its events.
    let home = pool.homes.get(ctid);
    if (!home) {
      const best = fewest(pool.conns.values());
      const fits = best && (best.accountCount() < perConnection || pool.conns.size >= pool.cap);
      home = { conn: fits ? best : open(pool), adapters: 0 };
      pool.homes.set(ctid, home);
    }
    home.adapters += 1;
    return { pool, home };
  };

  return {
    platform: 'platformc',
    capabilities: CTRADER_CAPABILITIES,
    connections: () => all,
    async closeAll() {
      const conns = [...all.values()];
      all.clear();
      // Adapters closed after this find nothing of theirs to close (and no key of a later connection to drop).
      for (const pool of pools.values()) pool.conns.clear();
      pools.clear();
      await Promise.all(conns.map((c) => c.close()));
    },
    async create(account): Promise<BrokerAdapter> {
      const creds = parseCTraderCredentials(account.credentials, account.brokerAccountId);
      const ctid = creds.ctidTraderAccountId;
      const { pool, home } = place(opts.resolveEndpoint(account.environment), ctid);
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
        onClose: async () => {
          if (--home.adapters <= 0 && pool.homes.get(ctid) === home) pool.homes.delete(ctid);
          const at = home.conn;
          if (!at.removeAccount(ctid)) return;
          const key = [...pool.conns].find(([, c]) => c === at)?.[0];
          if (key !== undefined) await drop(pool, key, at);
        },
      });
    },
  };
}
