import { randomBytes } from 'node:crypto';
import { sendJson, type WireResult } from '../http-wire.js';

/**
 * Mirrors the MetaApi REST endpoints one method per endpoint (provisioning API and client API), with no
 * interpretation and no retries: whether a call may be repeated is decided by its caller, which knows whether
 * it was a write. Every call ends as a WireResult, never a throw.
 */

export type { WireResult } from '../http-wire.js';

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
  /**
   * Client API base, e.g. https://mt-client-api-v1.new-york.agiliumtrade.ai, or how to find it (per account
   * region, see hosts.ts). A base that cannot be found fails the call before anything is sent.
   */
  clientUrl: string | (() => Promise<string>);
  token: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
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
  private readonly clientUrl: () => Promise<string>;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: MetaApiRawClientOptions) {
    this.provisioningUrl = opts.provisioningUrl.replace(/\/+$/, '');
    const c = opts.clientUrl;
    this.clientUrl = typeof c === 'string' ? () => Promise.resolve(c) : c;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  // ---- provisioning API -----------------------------------------------------------------------------

  searchServers(version: 4 | 5, query: string): Promise<WireResult> {
    return this.call('GET', this.provisioningUrl, `/known-mt-servers/${version}/search`, { query: { query } });
  }

  createAccount(body: NewMtAccountBody, transactionId: string): Promise<WireResult> {
    return this.call('POST', this.provisioningUrl, '/users/current/accounts', {
      body,
      headers: { 'transaction-id': transactionId },
    });
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
    return this.call('GET', this.clientUrl, path, {
      query: { offset: String(page.offset), limit: String(page.limit) },
    });
  }

  historyDeals(accountId: string, from: Date, to: Date, page: { offset: number; limit: number }): Promise<WireResult> {
    const path = `/users/current/accounts/${enc(accountId)}/history-deals/time/${enc(from.toISOString())}/${enc(to.toISOString())}`;
    return this.call('GET', this.clientUrl, path, {
      query: { offset: String(page.offset), limit: String(page.limit) },
    });
  }

  /** MetaApi's getSymbols: the terminal's symbol names. */
  symbols(accountId: string): Promise<WireResult> {
    return this.call('GET', this.clientUrl, `/users/current/accounts/${enc(accountId)}/symbols`);
  }

  symbolSpecification(accountId: string, symbol: string): Promise<WireResult> {
    return this.call(
      'GET',
      this.clientUrl,
      `/users/current/accounts/${enc(accountId)}/symbols/${enc(symbol)}/specification`,
    );
  }

  /** The one write endpoint. Sent once; a timeout here means "outcome unknown", never "try again". */
  trade(accountId: string, body: MtTradeBody): Promise<WireResult> {
    return this.call('POST', this.clientUrl, `/users/current/accounts/${enc(accountId)}/trade`, {
      body,
      write: true,
    });
  }

  // ---- plumbing -------------------------------------------------------------------------------------

  private async call(
    method: string,
    base: string | (() => Promise<string>),
    path: string,
    opts: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string>; write?: boolean } = {},
  ): Promise<WireResult> {
    let root: string;
    try {
      root = typeof base === 'string' ? base : await base();
    } catch (err) {
      // No host to send to: provably not sent, even for a write.
      const message = `MetaApi client-API host unknown: ${(err as Error).message}`;
      return { kind: 'network', method, path, code: null, message, notSent: true };
    }
    const url = new URL(root.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { 'auth-token': this.opts.token, ...(opts.headers ?? {}) };
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
