import { randomBytes } from 'node:crypto';

/**
 * Mirrors the MetaApi REST endpoints one method per endpoint (provisioning API and client API), with no
 * interpretation and no retries: whether a call may be repeated is decided by its caller, which knows whether
 * it was a write. Every call ends as a WireResult, never a throw.
 */

export type WireResult =
  | { kind: 'response'; status: number; body: unknown; retryAfterSec: number | null }
  /** No answer within the timeout: a write may or may not have been applied. */
  | { kind: 'timeout'; method: string; path: string }
  /** `notSent` when the request provably never reached the server (connection refused, DNS). */
  | { kind: 'network'; method: string; path: string; code: string | null; message: string; notSent: boolean };

/** Body of POST /trade (model MetatraderTrade); only the fields we send. */
export interface MtTradeBody {
  actionType: string;
  symbol?: string;
  volume?: number;
  openPrice?: number;
  stopLoss?: number;
  takeProfit?: number;
  positionId?: string;
  orderId?: string;
  comment?: string;
  clientId?: string;
  magic?: number;
}

export interface NewMtAccountBody {
  name: string;
  server: string;
  login: string;
  password: string;
  platform: 'mt4' | 'mt5';
  magic: number;
  type?: 'cloud-g1' | 'cloud-g2';
  region?: string;
  reliability?: 'high' | 'regular';
}

export interface MetaApiRawClientOptions {
  /** Provisioning API base, e.g. https://mt-provisioning-api-v1.agiliumtrade.agiliumtrade.ai */
  provisioningUrl: string;
  /** Client API base, e.g. https://mt-client-api-v1.new-york.agiliumtrade.ai */
  clientUrl: string;
  token: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

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

/** Retry-After is seconds or an HTTP date (fact sheet A2). */
export function parseRetryAfterHeader(h: string | null, now = Date.now()): number | null {
  if (h === null || h.trim() === '') return null;
  const n = Number(h);
  if (Number.isFinite(n) && n >= 0) return n;
  const t = Date.parse(h);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - now) / 1000));
}

/** The transaction-id of account creation: 32 random characters, reused while the answer is 202. */
export function newTransactionId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(32)].map((b) => alphabet[b % alphabet.length]).join('');
}

const enc = (s: string) => encodeURIComponent(s);

export class MetaApiRawClient {
  readonly timeoutMs: number;
  private readonly provisioningUrl: string;
  private readonly clientUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: MetaApiRawClientOptions) {
    this.provisioningUrl = opts.provisioningUrl.replace(/\/+$/, '');
    this.clientUrl = opts.clientUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  // ---- provisioning API -----------------------------------------------------------------------------

  searchServers(version: 4 | 5, query: string): Promise<WireResult> {
    return this.call('GET', this.provisioningUrl, `/known-mt-servers/${version}/search`, { query: { query } });
  }

  createAccount(body: NewMtAccountBody, transactionId: string): Promise<WireResult> {
    return this.call('POST', this.provisioningUrl, '/users/current/accounts', { body, headers: { 'transaction-id': transactionId } });
  }

  readAccount(accountId: string): Promise<WireResult> {
    return this.call('GET', this.provisioningUrl, `/users/current/accounts/${enc(accountId)}`);
  }

  deployAccount(accountId: string): Promise<WireResult> {
    return this.call('POST', this.provisioningUrl, `/users/current/accounts/${enc(accountId)}/deploy`);
  }

  undeployAccount(accountId: string): Promise<WireResult> {
    return this.call('POST', this.provisioningUrl, `/users/current/accounts/${enc(accountId)}/undeploy`);
  }

  deleteAccount(accountId: string): Promise<WireResult> {
    return this.call('DELETE', this.provisioningUrl, `/users/current/accounts/${enc(accountId)}`);
  }

  // ---- client API -----------------------------------------------------------------------------------

  accountInformation(accountId: string): Promise<WireResult> {
    return this.call('GET', this.clientUrl, `/users/current/accounts/${enc(accountId)}/account-information`);
  }

  positions(accountId: string): Promise<WireResult> {
    return this.call('GET', this.clientUrl, `/users/current/accounts/${enc(accountId)}/positions`);
  }

  orders(accountId: string): Promise<WireResult> {
    return this.call('GET', this.clientUrl, `/users/current/accounts/${enc(accountId)}/orders`);
  }

  /** Start inclusive, end exclusive; limit 1..1000. */
  historyOrders(accountId: string, from: Date, to: Date, page: { offset: number; limit: number }): Promise<WireResult> {
    const path = `/users/current/accounts/${enc(accountId)}/history-orders/time/${enc(from.toISOString())}/${enc(to.toISOString())}`;
    return this.call('GET', this.clientUrl, path, { query: { offset: String(page.offset), limit: String(page.limit) } });
  }

  historyDeals(accountId: string, from: Date, to: Date, page: { offset: number; limit: number }): Promise<WireResult> {
    const path = `/users/current/accounts/${enc(accountId)}/history-deals/time/${enc(from.toISOString())}/${enc(to.toISOString())}`;
    return this.call('GET', this.clientUrl, path, { query: { offset: String(page.offset), limit: String(page.limit) } });
  }

  symbolSpecification(accountId: string, symbol: string): Promise<WireResult> {
    return this.call('GET', this.clientUrl, `/users/current/accounts/${enc(accountId)}/symbols/${enc(symbol)}/specification`);
  }

  /** The one write endpoint. Sent once; a timeout here means "outcome unknown", never "try again". */
  trade(accountId: string, body: MtTradeBody): Promise<WireResult> {
    return this.call('POST', this.clientUrl, `/users/current/accounts/${enc(accountId)}/trade`, { body });
  }

  // ---- plumbing -------------------------------------------------------------------------------------

  private async call(
    method: string,
    base: string,
    path: string,
    opts: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<WireResult> {
    const url = new URL(base + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json', 'auth-token': this.opts.token, ...(opts.headers ?? {}) };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // The timeout signal also covers the body; headers followed by a stall is still a timeout.
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
    return { kind: 'response', status: res.status, body, retryAfterSec: parseRetryAfterHeader(res.headers.get('retry-after')) };
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
