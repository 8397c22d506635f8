import { AppError } from '../../domain/errors.js';
import type { InstrumentSpec, Order, Position } from '../../domain/types.js';
import type { OrderOutcome } from '../adapter.js';
import { readError, tradeTransportFailure } from './errors.js';
import {
  arr,
  type MtAccountInformation,
  type MtDeal,
  type MtTradeResult,
  parseAccountInformation,
  parseDeal,
  parseOrder,
  parsePosition,
  parseSymbolSpecification,
  parseTradeResult,
} from './parse.js';
import { MetaApiRawClient, type MtTradeBody, type WireResult } from './raw-client.js';
import { unresolved } from '../adapter.js';

/** MetatraderTrade as the adapter builds it; a bridge gateway translates it into its own message. */
export type MtTradeRequest = MtTradeBody;

/** The terminal answered (with any code), or the call failed in transport and this is what that means. */
export type TradeAnswer =
  | { kind: 'result'; result: MtTradeResult }
  | { kind: 'failed'; outcome: Exclude<OrderOutcome, { kind: 'confirmed' }> };

/**
 * One MT account's terminal, as the adapter needs it: MetaTrader models in, MetaTrader models out. MetaApi's
 * REST API is one implementation; a self-hosted bridge EA (dialling out to us) can be another, without the
 * adapter's outcome and lookup logic changing. Reads throw AppError; `trade` never throws for a broker answer.
 */
export interface MetaTraderGateway {
  accountInformation(): Promise<MtAccountInformation>;
  /** Null when the terminal has no such symbol. */
  symbolSpecification(symbol: string): Promise<InstrumentSpec | null>;
  /** The names of the terminal's symbols. */
  symbols(): Promise<string[]>;
  positions(): Promise<Position[]>;
  /** Pending orders. */
  orders(): Promise<Order[]>;
  /** Final orders created in [from, to). */
  historyOrders(from: Date, to: Date): Promise<Order[]>;
  /** Deals done in [from, to), every one of them: a history that does not fit is an error, never a silent cut. */
  historyDeals(from: Date, to: Date): Promise<MtDeal[]>;
  /** Sent once, never repeated here. */
  trade(req: MtTradeRequest): Promise<TradeAnswer>;
  close(): Promise<void>;
}

const PAGE = 1000;
const MAX_PAGES = 20;

export interface MetaApiGatewayOptions {
  provisioningUrl?: string;
  /** The account's client-API base, or how to find it (its region's host, see hosts.ts). */
  clientUrl: string | (() => Promise<string>);
  token: string;
  /** MetaApi account id (the provisioning `_id`), not the MT login. */
  accountId: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class MetaApiGateway implements MetaTraderGateway {
  private readonly raw: MetaApiRawClient;
  private readonly accountId: string;

  constructor(opts: MetaApiGatewayOptions) {
    this.raw = new MetaApiRawClient({
      provisioningUrl: opts.provisioningUrl ?? (typeof opts.clientUrl === 'string' ? opts.clientUrl : ''),
      clientUrl: opts.clientUrl,
      token: opts.token,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    this.accountId = opts.accountId;
  }

  accountInformation(): Promise<MtAccountInformation> {
    return this.read('account information', () => this.raw.accountInformation(this.accountId), parseAccountInformation);
  }

  async symbolSpecification(symbol: string): Promise<InstrumentSpec | null> {
    const r = await this.raw.symbolSpecification(this.accountId, symbol);
    if (r.kind === 'response' && r.status === 404) return null;
    return this.ok(r, `specification of ${symbol}`, (b) => parseSymbolSpecification(b, symbol));
  }

  symbols(): Promise<string[]> {
    return this.read(
      'symbols',
      () => this.raw.symbols(this.accountId),
      (b) => {
        if (!Array.isArray(b) || b.some((x) => typeof x !== 'string'))
          throw new AppError('upstream_unavailable', 'MetaApi symbols: expected a list of names');
        return b as string[];
      },
    );
  }

  positions(): Promise<Position[]> {
    return this.read(
      'positions',
      () => this.raw.positions(this.accountId),
      (b) => arr(b, 'positions').map(parsePosition),
    );
  }

  orders(): Promise<Order[]> {
    return this.read(
      'orders',
      () => this.raw.orders(this.accountId),
      (b) =>
        arr(b, 'orders')
          .map((o) => parseOrder(o, true))
          .filter((o): o is Order => o !== null),
    );
  }

  historyOrders(from: Date, to: Date): Promise<Order[]> {
    return this.pages(
      'history orders',
      (page) => this.raw.historyOrders(this.accountId, from, to, page),
      (row) => parseOrder(row),
    );
  }

  historyDeals(from: Date, to: Date): Promise<MtDeal[]> {
    return this.pages(
      'history deals',
      (page) => this.raw.historyDeals(this.accountId, from, to, page),
      parseDeal,
      true,
    );
  }

  async trade(req: MtTradeRequest): Promise<TradeAnswer> {
    const r = await this.raw.trade(this.accountId, req);
    const failure = tradeTransportFailure(r, `MetaApi trade ${req.actionType}`);
    if (failure) return { kind: 'failed', outcome: failure };
    try {
      return { kind: 'result', result: parseTradeResult(r.kind === 'response' ? r.body : null) };
    } catch (err) {
      // A 200 we cannot read may still be a fill: only a lookup can tell.
      return {
        kind: 'failed',
        outcome: unresolved('write_outcome_unknown', `unreadable trade answer: ${(err as Error).message}`),
      };
    }
  }

  async close(): Promise<void> {}

  private async read<T>(what: string, call: () => Promise<WireResult>, parse: (body: unknown) => T): Promise<T> {
    return this.ok(await call(), what, parse);
  }

  private ok<T>(r: WireResult, what: string, parse: (body: unknown) => T): T {
    if (r.kind === 'response' && r.status === 200) return parse(r.body);
    throw readError(r, `MetaApi ${what}`);
  }

  /**
   * offset/limit paging; a short page (counted before parsing drops rows) is the last one. Past MAX_PAGES full
   * pages the rest is dropped, or, with `whole`, the read fails: a deal replay must not skip deals unseen.
   */
  private async pages<T>(
    what: string,
    call: (page: { offset: number; limit: number }) => Promise<WireResult>,
    parse: (row: unknown) => T | null,
    whole = false,
  ): Promise<T[]> {
    const out: T[] = [];
    for (let p = 0; p < MAX_PAGES; p++) {
      const rows = this.ok(await call({ offset: p * PAGE, limit: PAGE }), what, (b) => arr(b, what));
      for (const row of rows) {
        const v = parse(row);
        if (v !== null) out.push(v);
      }
      if (rows.length < PAGE) return out;
    }
    if (whole)
      throw new AppError(
        'upstream_error',
        `MetaApi ${what}: more than ${MAX_PAGES * PAGE} rows, read a shorter window`,
      );
    return out;
  }
}
