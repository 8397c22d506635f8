/**
 * Mirrors the TradeLocker public REST API one method per endpoint, with no interpretation and no retries:
 * what a result means (and whether a write may be repeated) is decided by the adapter, which knows whether
 * the call was a read or a write. Every call ends as a WireResult, never a throw.
 */

export type WireResult =
  | { kind: 'response'; status: number; body: unknown; retryAfterSec: number | null }
  /** No answer within the timeout: a write may or may not have been applied. */
  | { kind: 'timeout'; method: string; path: string }
  /** `notSent` when the request provably never reached the server (connection refused, DNS). */
  | { kind: 'network'; method: string; path: string; code: string | null; message: string; notSent: boolean };

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

export interface PlaceOrderBody {
  tradableInstrumentId: number;
  qty: string;
  side: 'buy' | 'sell';
  type: 'market' | 'limit' | 'stop';
  validity: 'IOC' | 'GTC';
  routeId: number;
  price?: string;
  stopPrice?: string;
  stopLoss?: string;
  stopLossType?: 'absolute';
  takeProfit?: string;
  takeProfitType?: 'absolute';
  strategyId?: string;
}

export interface ModifyOrderBody {
  price?: string;
  stopPrice?: string;
  qty?: string;
  stopLoss?: string | null;
  stopLossType?: 'absolute';
  takeProfit?: string | null;
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

/** Connection-level failures that prove the request never left (so even a write is safe to resend). */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCode(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function retryAfter(h: string | null): number | null {
  if (h === null) return null;
  const n = Number(h);
  if (Number.isFinite(n) && n >= 0) return n;
  const t = Date.parse(h);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - Date.now()) / 1000));
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
    return this.call('POST', `/trade/accounts/${enc(accountId)}/orders`, { auth, body });
  }

  modifyOrder(auth: AuthContext, orderId: string, body: ModifyOrderBody): Promise<WireResult> {
    return this.call('PATCH', `/trade/orders/${enc(orderId)}`, { auth, body });
  }

  cancelOrder(auth: AuthContext, orderId: string): Promise<WireResult> {
    return this.call('DELETE', `/trade/orders/${enc(orderId)}`, { auth });
  }

  modifyPosition(auth: AuthContext, positionId: string, body: { stopLoss: string | null; takeProfit: string | null }): Promise<WireResult> {
    return this.call('PATCH', `/trade/positions/${enc(positionId)}`, { auth, body });
  }

  /** qty "0" closes the whole position. */
  closePosition(auth: AuthContext, positionId: string, qty: string): Promise<WireResult> {
    return this.call('DELETE', `/trade/positions/${enc(positionId)}`, { auth, body: { qty } });
  }

  // ---- plumbing -------------------------------------------------------------------------------------

  private async call(
    method: string,
    path: string,
    opts: { auth?: AuthContext; body?: unknown; query?: { [k: string]: number | string | undefined } },
  ): Promise<WireResult> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (opts.auth) headers.authorization = `Bearer ${opts.auth.accessToken}`;
    if (opts.auth?.accNum !== undefined) headers.accNum = String(opts.auth.accNum);
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      return this.failure(method, path, err);
    }
    let text: string;
    try {
      // The timeout signal also covers the body; a server that sends headers then stalls is still a timeout.
      text = await res.text();
    } catch (err) {
      return this.failure(method, path, err);
    }
    let body: unknown = null;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { kind: 'response', status: res.status, body, retryAfterSec: retryAfter(res.headers.get('retry-after')) };
  }

  private failure(method: string, path: string, err: unknown): WireResult {
    const name = (err as { name?: unknown })?.name;
    if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout', method, path };
    const code = errorCode(err);
    return {
      kind: 'network',
      method,
      path,
      code,
      message: err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err),
      notSent: code !== null && NOT_SENT_CODES.has(code),
    };
  }
}

const enc = (s: string) => encodeURIComponent(s);
