import { toWireDeal, toWireOrder, toWirePosition } from '../../protocols/bridge/convert.js';
import type { EventMsg, TransactionType, WireOrder } from '../../protocols/bridge/schemas.js';
import type { SimBrokerApi, SimDeal, SimEvent } from '../contract.js';

/** An event before the EA numbers it. */
export type Transaction = Omit<EventMsg, 'type' | 'seq'>;

const MAX_REMEMBERED = 50_000;

/**
 * Turns the simulated broker's changes into the MqlTradeTransaction sequence MT5 reports to OnTradeTransaction:
 * a market order is ORDER_ADD, DEAL_ADD, ORDER_DELETE, HISTORY_ADD; a pending order's fill is its DEAL_ADD then
 * its ORDER_DELETE and HISTORY_ADD; a stop change is POSITION; a pending order placed, changed or cancelled is
 * ORDER_ADD, ORDER_UPDATE, ORDER_DELETE + HISTORY_ADD. Tickets are the simulator's (one counter for orders,
 * deals and positions, as MT5's are unique per server); each event carries the state read back after it.
 */
export class TransactionMapper {
  /** Volume of each open position as last reported, to tell a netting fill from a stop change. */
  private readonly volumes = new Map<string, string>();
  private readonly addedOrders = new Set<string>();
  private readonly deletedOrders = new Set<string>();

  constructor(
    private readonly broker: SimBrokerApi,
    private readonly accountId: string,
  ) {}

  map(ev: SimEvent): Transaction[] {
    const at = Date.parse(ev.at);
    switch (ev.kind) {
      case 'position_opened':
      case 'position_reduced':
      case 'position_closed':
        return this.dealSequence(ev, at);
      case 'position_modified': {
        const p = ev.position!;
        if (this.volumes.get(p.id) !== p.volume.toFixed()) return this.dealSequence(ev, at);
        return [this.tx('POSITION', at, { position: p.id, symbol: p.symbol, positionState: toWirePosition(p) })];
      }
      case 'order_placed':
        this.remember(this.addedOrders, ev.order!.id);
        return [this.orderTx('ORDER_ADD', ev, at)];
      case 'order_modified':
        return [this.orderTx('ORDER_UPDATE', ev, at)];
      case 'order_cancelled':
      case 'order_filled':
        return this.orderDone(ev.order!.id, at);
    }
  }

  private dealSequence(ev: SimEvent, at: number): Transaction[] {
    const p = ev.position!;
    const deal = this.broker.dealsOf(this.accountId, { positionId: p.id }).at(-1);
    const closed = ev.kind === 'position_closed';
    if (closed) this.volumes.delete(p.id);
    else this.volumes.set(p.id, p.volume.toFixed());
    if (!deal) return [];
    const out: Transaction[] = [];
    const order = deal.orderId;
    if (!this.addedOrders.has(order)) {
      this.remember(this.addedOrders, order);
      const o = this.orderState(order);
      if (o) out.push(this.tx('ORDER_ADD', at, { order, symbol: p.symbol, orderState: { ...o, state: 'placed' } }));
    }
    out.push(
      this.tx('DEAL_ADD', at, {
        order,
        deal: deal.id,
        position: p.id,
        symbol: p.symbol,
        positionState: closed ? null : toWirePosition(p),
        dealState: toWireDeal(dealLike(deal)),
      }),
    );
    out.push(...this.orderDone(order, at));
    return out;
  }

  private orderDone(order: string, at: number): Transaction[] {
    if (this.deletedOrders.has(order)) return [];
    const o = this.orderState(order);
    if (!o || o.state === 'placed') return [];
    this.remember(this.deletedOrders, order);
    const fields = { order, symbol: o.symbol, orderState: o, position: o.position };
    return [this.tx('ORDER_DELETE', at, fields), this.tx('HISTORY_ADD', at, fields)];
  }

  private orderTx(type: TransactionType, ev: SimEvent, at: number): Transaction {
    const o = ev.order!;
    return this.tx(type, at, { order: o.id, symbol: o.symbol, orderState: toWireOrder(o), position: o.positionId });
  }

  private orderState(id: string): WireOrder | null {
    const o = this.broker.order(this.accountId, id);
    return o ? toWireOrder(o) : null;
  }

  private tx(transaction: TransactionType, time: number, f: Partial<Transaction>): Transaction {
    return {
      transaction,
      order: null,
      deal: null,
      position: null,
      symbol: null,
      positionState: null,
      orderState: null,
      dealState: null,
      time,
      ...f,
    };
  }

  private remember(set: Set<string>, id: string): void {
    if (set.size >= MAX_REMEMBERED) set.clear();
    set.add(id);
  }
}

export const dealLike = (x: SimDeal) => ({ ...x, orderId: x.orderId });
