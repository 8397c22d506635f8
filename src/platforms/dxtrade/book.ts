import type { Decimal } from '../../domain/decimal.js';
import type { Deal, Order, Position } from '../../domain/types.js';
import { type DxOrder, dealOf, listOf, parseOrder, parsePosition } from './parse.js';
import type { DxRawClient, WireResult } from './raw-client.js';

type Read = <T>(what: string, call: (token: string) => Promise<WireResult>, parse: (b: unknown) => T) => Promise<T>;

/** How far back the order that a write just made is looked for: covers clock skew between us and the server. */
const SETTLE_LOOKBACK_MS = 5 * 60_000;
/** How far before `since` the opening orders of closed positions are looked for (their tags). */
const TAG_LOOKBACK_MS = 7 * 24 * 3600_000;

export interface Guard {
  orderCode: string;
  version: string;
  level: Decimal | null;
}

/**
 * The account's book as the REST API shows it: positions, working orders (the user's own and the position-attached
 * protection orders that hold SL/TP), and the order history with its executions.
 */
export class DxBook {
  constructor(
    private readonly read: Read,
    private readonly raw: DxRawClient,
    private readonly account: string,
    /** Units per lot of a symbol: the wire counts units, the port lots. */
    private readonly lotOf: (symbol: string) => Decimal,
  ) {}

  private inLots = (o: DxOrder): DxOrder => {
    const lot = this.lotOf(o.order.symbol);
    return {
      ...o,
      order: { ...o.order, volume: o.order.volume.div(lot), filledVolume: o.order.filledVolume.div(lot) },
      executions: o.executions.map((e) => ({ ...e, quantity: e.quantity.div(lot) })),
    };
  };

  positions(): Promise<Position[]> {
    return this.read(
      'positions',
      (t) => this.raw.positions(t, this.account),
      (b) =>
        listOf(b, 'positions')
          .map(parsePosition)
          .map((p) => ({ ...p, volume: p.volume.div(this.lotOf(p.symbol)) })),
    );
  }

  working(): Promise<DxOrder[]> {
    return this.read(
      'orders',
      (t) => this.raw.orders(t, this.account),
      (b) => listOf(b, 'orders').map((o) => this.inLots(parseOrder(o))),
    );
  }

  /** Orders issued in the window (ISO `issued-from`/`issued-to`, the spec's RFC 3339 times), working and final. */
  history(q: { from?: Date | undefined; to?: Date | undefined; transactionFrom?: Date }): Promise<DxOrder[]> {
    const query: Record<string, string> = {};
    if (q.from) query['issued-from'] = q.from.toISOString();
    if (q.to) query['issued-to'] = q.to.toISOString();
    if (q.transactionFrom) query['transaction-from'] = q.transactionFrom.toISOString();
    return this.read(
      'orders history',
      (t) => this.raw.ordersHistory(t, this.account, query),
      (b) => listOf(b, 'orders').map((o) => this.inLots(parseOrder(o))),
    );
  }

  async byCode(code: string, sentAt: number): Promise<DxOrder | undefined> {
    const rows = await this.history({ from: new Date(sentAt - SETTLE_LOOKBACK_MS) });
    return rows.find((o) => o.orderCode === code || o.order.tag === code);
  }

  async protections(positionCode: string): Promise<{ sl?: Guard; tp?: Guard }> {
    const out: { sl?: Guard; tp?: Guard } = {};
    for (const o of await this.working()) {
      if (!isProtective(o) || o.order.positionId !== positionCode) continue;
      const g = { orderCode: o.orderCode, version: o.version, level: o.order.price };
      if (o.order.type === 'stop') out.sl = g;
      else if (o.order.type === 'limit') out.tp = g;
    }
    return out;
  }

  /**
   * Positions with SL/TP from their protection orders, and the user's pending orders. With `history`, positions
   * also get the tag of the order that opened them (positions do not carry orderCode).
   */
  async snapshot(history?: DxOrder[]): Promise<{ positions: Position[]; orders: Order[] }> {
    const positions = await this.positions();
    const working = await this.working();
    const tagOf = new Map<string, string>();
    for (const o of history ?? [])
      if (o.positionEffect !== 'CLOSE' && o.order.positionId && o.order.tag) tagOf.set(o.order.positionId, o.order.tag);
    const sl = new Map<string, Decimal | null>();
    const tp = new Map<string, Decimal | null>();
    for (const o of working) {
      if (!isProtective(o)) continue;
      (o.order.type === 'stop' ? sl : tp).set(o.order.positionId!, o.order.price);
    }
    return {
      positions: positions.map((p) => ({
        ...p,
        stopLoss: sl.get(p.id) ?? null,
        takeProfit: tp.get(p.id) ?? null,
        tag: tagOf.get(p.id) ?? null,
      })),
      orders: working.filter((o) => !isProtective(o)).map((o) => o.order),
    };
  }

  /** Every execution at or after `since`, oldest first; a close takes the tag of the order that opened. */
  async deals(since: Date): Promise<Deal[]> {
    const rows = await this.history({ from: new Date(since.getTime() - TAG_LOOKBACK_MS), transactionFrom: since });
    const openTag = new Map<string, string>();
    for (const o of rows)
      if (o.positionEffect !== 'CLOSE' && o.order.positionId && o.order.tag)
        openTag.set(o.order.positionId, o.order.tag);
    const out: Deal[] = [];
    for (const o of rows) {
      const tag = o.positionEffect === 'CLOSE' ? (openTag.get(o.order.positionId ?? '') ?? null) : o.order.tag;
      for (const e of o.executions) if (Date.parse(e.time) >= since.getTime()) out.push(dealOf(o, e, tag));
    }
    return out.sort((a, b) => Date.parse(a.time) - Date.parse(b.time) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

/** SL/TP live as position-attached CLOSE orders; they are not the user's pending orders. */
export function isProtective(o: DxOrder): boolean {
  return o.order.status === 'pending' && o.positionEffect === 'CLOSE' && o.order.positionId !== null;
}
