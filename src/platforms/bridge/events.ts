import { dec } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import type { BrokerEvent } from '../adapter.js';
import { fromWireOrder, fromWirePosition } from '../../protocols/bridge/convert.js';
import type { EventMsg, SnapshotMsg } from '../../protocols/bridge/schemas.js';

/**
 * Turns the EA's transactions into the port's broker events by comparing each reported state with the last one
 * known, so an event seen twice (a resend after a reconnect, a snapshot after an event) reports nothing twice,
 * and a snapshot after a gap reports what changed meanwhile, once.
 */
export class EventDeriver {
  private readonly positions = new Map<string, Position>();
  private readonly orders = new Map<string, Order>();

  constructor(private readonly emit: (ev: BrokerEvent) => void) {}

  /** The state of a snapshot; with `report`, what differs from the known state is reported. */
  reconcile(s: SnapshotMsg, report: boolean): void {
    const at = new Date().toISOString();
    const seen = new Set<string>();
    for (const w of s.positions) {
      seen.add(w.ticket);
      this.position(fromWirePosition(w), report, at, null);
    }
    for (const [id, p] of this.positions) if (!seen.has(id)) this.closed(p, p.volume, report, at);
    const pending = new Set<string>();
    for (const w of s.orders) {
      pending.add(w.ticket);
      this.order(fromWireOrder(w), report, at);
    }
    const history = new Map(s.history.map((o) => [o.ticket, o]));
    for (const [id, o] of this.orders) {
      if (pending.has(id)) continue;
      const final = history.get(id);
      this.finish(final ? fromWireOrder(final) : { ...o, status: 'cancelled' }, report, at);
    }
  }

  onEvent(e: EventMsg): void {
    const at = new Date(e.time).toISOString();
    switch (e.transaction) {
      case 'DEAL_ADD':
      case 'POSITION': {
        if (e.positionState) return this.position(fromWirePosition(e.positionState), true, at, e);
        const known = e.position ? this.positions.get(e.position) : undefined;
        if (known && e.transaction === 'DEAL_ADD') {
          const vol = e.dealState ? dec(e.dealState.volume) : known.volume;
          const price = e.dealState ? dec(e.dealState.price) : known.currentPrice;
          this.closed(
            { ...known, currentPrice: price, profit: e.dealState ? dec(e.dealState.profit) : null },
            vol,
            true,
            at,
          );
        }
        return;
      }
      case 'ORDER_ADD':
      case 'ORDER_UPDATE':
        if (e.orderState && e.orderState.type !== 'market' && e.orderState.state === 'placed')
          this.order(fromWireOrder(e.orderState), true, at);
        return;
      case 'ORDER_DELETE':
        if (e.orderState && this.orders.has(e.orderState.ticket)) this.finish(fromWireOrder(e.orderState), true, at);
        return;
      default:
        return;
    }
  }

  private position(p: Position, report: boolean, at: string, e: EventMsg | null): void {
    const known = this.positions.get(p.id);
    this.positions.set(p.id, p);
    if (!report) return;
    if (!known) return this.emit({ kind: 'position_opened', position: p, at });
    if (p.volume.lt(known.volume))
      return this.emit({ kind: 'position_reduced', position: p, closedVolume: known.volume.minus(p.volume), at });
    const changed =
      !p.volume.eq(known.volume) || !same(p.stopLoss, known.stopLoss) || !same(p.takeProfit, known.takeProfit);
    if (changed || (e?.transaction === 'DEAL_ADD' && !p.openPrice.eq(known.openPrice)))
      this.emit({ kind: 'position_modified', position: p, at });
  }

  private closed(p: Position, volume: Position['volume'], report: boolean, at: string): void {
    this.positions.delete(p.id);
    if (report) this.emit({ kind: 'position_closed', position: p, closedVolume: volume, at });
  }

  private order(o: Order, report: boolean, at: string): void {
    const known = this.orders.get(o.id);
    this.orders.set(o.id, o);
    if (!report) return;
    if (!known) return this.emit({ kind: 'order_placed', order: o, at });
    if (!same(o.price, known.price) || !same(o.stopLoss, known.stopLoss) || !same(o.takeProfit, known.takeProfit))
      this.emit({ kind: 'order_modified', order: o, at });
  }

  private finish(o: Order, report: boolean, at: string): void {
    if (!this.orders.delete(o.id) || !report) return;
    this.emit({ kind: o.status === 'filled' ? 'order_filled' : 'order_cancelled', order: o, at });
  }
}

const same = (a: Position['stopLoss'], b: Position['stopLoss']) => (a === null ? b === null : b !== null && a.eq(b));
