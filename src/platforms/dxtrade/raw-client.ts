import { sendJson, type WireResult } from '../http-wire.js';

export type { WireResult } from '../http-wire.js';

/**
 * The DXtrade REST API (Devexperts "DX REST API", base `<server>/dxsca-web`) as plain calls: one request each, no
 * interpretation, no retries. Authorisation is `Authorization: DXAPI <sessionToken>` from POST /login. PUT and
 * DELETE of orders are conditional requests (the spec: 403, error code 99, without If-Match).
 */
export class DxRawClient {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly base: string;

  constructor(opts: { baseUrl: string; timeoutMs: number; fetch?: typeof fetch }) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  private call(
    method: string,
    path: string,
    o: { token?: string; body?: unknown; write?: boolean; query?: Record<string, string>; ifMatch?: string } = {},
  ): Promise<WireResult> {
    const url = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (o.token) headers.authorization = `DXAPI ${o.token}`;
    if (o.ifMatch !== undefined) headers['if-match'] = o.ifMatch;
    return sendJson(this.fetchImpl, url, {
      method,
      path,
      headers,
      ...(o.body !== undefined ? { body: o.body } : {}),
      timeoutMs: this.timeoutMs,
      ...(o.write ? { write: true } : {}),
    });
  }

  login(body: { username: string; domain: string; password: string }): Promise<WireResult> {
    return this.call('POST', '/login', { body });
  }
  ping(token: string): Promise<WireResult> {
    return this.call('POST', '/ping', { token });
  }
  logout(token: string): Promise<WireResult> {
    return this.call('POST', '/logout', { token });
  }
  user(token: string, fullName: string): Promise<WireResult> {
    return this.call('GET', `/users/${encodeURIComponent(fullName)}`, { token });
  }
  instruments(token: string): Promise<WireResult> {
    return this.call('GET', '/instruments/query', { token });
  }
  instrument(token: string, symbol: string): Promise<WireResult> {
    return this.call('GET', `/instruments/${encodeURIComponent(symbol)}`, { token });
  }
  instrumentDetails(token: string, account: string, symbol: string): Promise<WireResult> {
    return this.call('GET', `${acct(account)}/instruments/${encodeURIComponent(symbol)}`, { token });
  }
  metrics(token: string, account: string): Promise<WireResult> {
    return this.call('GET', `${acct(account)}/metrics`, { token });
  }
  positions(token: string, account: string): Promise<WireResult> {
    return this.call('GET', `${acct(account)}/positions`, { token });
  }
  orders(token: string, account: string): Promise<WireResult> {
    return this.call('GET', `${acct(account)}/orders`, { token });
  }
  ordersHistory(token: string, account: string, query: Record<string, string>): Promise<WireResult> {
    return this.call('GET', `${acct(account)}/orders/history`, { token, query });
  }
  placeOrder(token: string, account: string, body: unknown): Promise<WireResult> {
    return this.call('POST', `${acct(account)}/orders`, { token, body, write: true });
  }
  modifyOrder(token: string, account: string, body: unknown, ifMatch: string): Promise<WireResult> {
    return this.call('PUT', `${acct(account)}/orders`, { token, body, write: true, ifMatch });
  }
  cancelOrder(token: string, account: string, orderCode: string, ifMatch: string): Promise<WireResult> {
    return this.call('DELETE', `${acct(account)}/orders/${encodeURIComponent(orderCode)}`, {
      token,
      write: true,
      ifMatch,
    });
  }
}

const acct = (account: string) => `/accounts/${encodeURIComponent(account)}`;
