import { sendJson, type WireResult } from '../http-wire.js';
/**
 * Mirrors the TradeLocker public REST API one method per endpoint, with no interpretation and no retries:
 * what a result means (and whether a write may be repeated) is decided by the adapter, which knows whether
 * the call was a read or a write. Every call ends as a WireResult, never a throw.
 */

export type { WireResult } from '../http-wire.js';

export interface AuthContext {
  accessToken: string;
  /** Required on /trade/* routes; the per-user account ordinal from all-accounts. */
  accNum?: number;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expireDate: string;
}

/**
 * Bodies as the official client (tradelocker-python) sends them: instrument and route ids as strings, prices and
 * SL/TP as JSON numbers, qty as a string (decimal text, so lots never pick up binary noise).
 */
export interface PlaceOrderBody {
  tradableInstrumentId: string;
  qty: string;
  side: 'buy' | 'sell';
  type: 'market' | 'limit' | 'stop';
  validity: 'IOC' | 'GTC';
  routeId: string;
  price?: number;
  stopPrice?: number;
  stopLoss?: number;
  stopLossType?: 'absolute';
  takeProfit?: number;
  takeProfitType?: 'absolute';
  strategyId?: string;
}

export interface ModifyOrderBody {
  price?: number;
  stopPrice?: number;
  qty?: string;
  stopLoss?: number | null;
  stopLossType?: 'absolute';
  takeProfit?: number | null;
  takeProfitType?: 'absolute';
  validity?: 'IOC' | 'GTC';
}

export type OrdersQuery = {
  from?: number;
  to?: number;
  tradableInstrumentId?: number;
};

export interface RawClientOptions {
  /** Ends with /backend-api. */
  baseUrl: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class TradeLockerRawClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: RawClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  // ---- auth -----------------------------------------------------------------------------------------

  signIn(body: { email: string; password: string; server: string }): Promise<WireResult> {
    return this.call('POST', '/auth/jwt/token', { body });
  }

  refresh(refreshToken: string): Promise<WireResult> {
    return this.call('POST', '/auth/jwt/refresh', { body: { refreshToken } });
  }

  allAccounts(auth: AuthContext): Promise<WireResult> {
    return this.call('GET', '/auth/jwt/all-accounts', { auth: { accessToken: auth.accessToken } });
  }

  // ---- reads ----------------------------------------------------------------------------------------

  config(auth: AuthContext): Promise<WireResult> {
    return this.call('GET', '/trade/config', { auth });
  }

  accountState(auth: AuthContext, accountId: string): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/state`, { auth });
  }

  positions(auth: AuthContext, accountId: string): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/positions`, { auth });
  }

  orders(auth: AuthContext, accountId: string, q: OrdersQuery = {}): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/orders`, { auth, query: q });
  }

  ordersHistory(auth: AuthContext, accountId: string, q: OrdersQuery = {}): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/ordersHistory`, { auth, query: q });
  }

  /** The current session's fills; the route takes no query (no time window), so callers filter by time. */
  executions(auth: AuthContext, accountId: string): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/executions`, { auth });
  }

  instruments(auth: AuthContext, accountId: string): Promise<WireResult> {
    return this.call('GET', `/trade/accounts/${enc(accountId)}/instruments`, { auth });
  }

  instrumentDetails(auth: AuthContext, tradableInstrumentId: number, routeId: number): Promise<WireResult> {
    return this.call('GET', `/trade/instruments/${tradableInstrumentId}`, { auth, query: { routeId } });
  }

  quotes(auth: AuthContext, tradableInstrumentId: number, routeId: number): Promise<WireResult> {
    return this.call('GET', '/trade/quotes', { auth, query: { tradableInstrumentId, routeId } });
  }

  // ---- writes (never retried here or anywhere on timeout) -------------------------------------------

  placeOrder(auth: AuthContext, accountId: string, body: PlaceOrderBody): Promise<WireResult> {
    return this.call('POST', `/trade/accounts/${enc(accountId)}/orders`, { auth, body, write: true });
  }

  modifyOrder(auth: AuthContext, orderId: string, body: ModifyOrderBody): Promise<WireResult> {
    return this.call('PATCH', `/trade/orders/${enc(orderId)}`, { auth, body, write: true });
  }

  cancelOrder(auth: AuthContext, orderId: string): Promise<WireResult> {
    return this.call('DELETE', `/trade/orders/${enc(orderId)}`, { auth, write: true });
  }

  modifyPosition(
    auth: AuthContext,
    positionId: string,
    body: { stopLoss: number | null; takeProfit: number | null },
  ): Promise<WireResult> {
    return this.call('PATCH', `/trade/positions/${enc(positionId)}`, { auth, body, write: true });
  }

  /** qty "0" closes the whole position. */
  closePosition(auth: AuthContext, positionId: string, qty: string): Promise<WireResult> {
    return this.call('DELETE', `/trade/positions/${enc(positionId)}`, { auth, body: { qty }, write: true });
  }

  // ---- plumbing -------------------------------------------------------------------------------------

  private async call(
    method: string,
    path: string,
    opts: {
      auth?: AuthContext;
      body?: unknown;
      query?: { [k: string]: number | string | undefined };
      /** A trading write: passes the write gate right before it is sent. */
      write?: boolean;
    },
  ): Promise<WireResult> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {};
    if (opts.auth) headers.authorization = `Bearer ${opts.auth.accessToken}`;
    if (opts.auth?.accNum !== undefined) headers.accNum = String(opts.auth.accNum);
    return sendJson(this.fetchImpl, url, {
      method,
      path,
      headers,
      body: opts.body,
      timeoutMs: this.timeoutMs,
      write: opts.write === true,
    });
  }
}

const enc = (s: string) => encodeURIComponent(s);
