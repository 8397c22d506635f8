import { ExecutionType, OrderStatus, PositionStatus } from '../../protocols/ctrader/enums.js';
import { PT } from '../../protocols/ctrader/payload-types.js';
import type { SimBrokerApi, SimDeal, SimEvent } from '../contract.js';
import type { SimWire } from './wire.js';

type Body = Record<string, unknown>;
export type Reply = [payloadType: number, body: Body];

/**
 * A change the client did not ask for on this connection (SL/TP hit, a pending order triggering, a trade placed
 * through another front end) becomes the execution event cTrader would push, flagged isServerEvent.
 */
export function serverExecutionEvents(
  broker: SimBrokerApi,
  wire: SimWire,
  accountId: string,
  ctid: string,
  ev: SimEvent,
): Reply[] {
  const base = (executionType: number, extra: Body): Reply => [
    PT.EXECUTION_EVENT,
    { ctidTraderAccountId: ctid, executionType, isServerEvent: true, ...extra },
  ];
  // Index lookups: every Slave and Master event of every connection comes through here, and a scan of the
  // account's history would grow with every trade it ever made.
  const lastDeal = (positionId: string, orderId?: string): SimDeal | undefined =>
    broker
      .dealsOf(accountId, { positionId })
      .filter((d) => orderId === undefined || d.orderId === orderId)
      .at(-1);
  const orderOf = (id: string) => broker.order(accountId, id);

  switch (ev.kind) {
    case 'position_opened': {
      const p = ev.position!;
      const deal = lastDeal(p.id);
      const order = deal ? orderOf(deal.orderId) : undefined;
      // A pending order's fill is told once, by the order_filled event that follows (it carries order + position).
      if (order && order.type !== 'market') return [];
      const extra: Body = { position: wire.position(p) };
      if (order) extra.order = wire.order(order, { executionPrice: deal?.price ?? null });
      if (deal) extra.deal = wire.deal(deal);
      return [base(ExecutionType.ORDER_FILLED, extra)];
    }
    case 'position_modified':
      return [base(ExecutionType.ORDER_REPLACED, { position: wire.position(ev.position!) })];
    case 'position_closed':
    case 'position_reduced': {
      const p = ev.position!;
      const closed = ev.kind === 'position_closed';
      const deal = broker
        .dealsOf(accountId, { positionId: p.id })
        .reverse()
        .find((d) => d.entry === 'out');
      const extra: Body = {
        position: closed ? wire.position(p, PositionStatus.CLOSED, ev.closedVolume) : wire.position(p),
      };
      if (deal) {
        const order = orderOf(deal.orderId);
        if (order) extra.order = wire.order(order, { executionPrice: deal.price, closing: true });
        extra.deal = wire.deal(deal, { entryPrice: p.openPrice, balance: broker.state(accountId).balance });
      }
      return [base(ExecutionType.ORDER_FILLED, extra)];
    }
    case 'order_placed':
      return [base(ExecutionType.ORDER_ACCEPTED, { order: wire.order(ev.order!) })];
    case 'order_modified':
      return [base(ExecutionType.ORDER_REPLACED, { order: wire.order(ev.order!) })];
    case 'order_cancelled': {
      const o = ev.order!;
      const type = o.status === 'rejected' ? ExecutionType.ORDER_REJECTED : ExecutionType.ORDER_CANCELLED;
      return [base(type, { order: wire.order(o) })];
    }
    case 'order_filled': {
      const o = ev.order!;
      const extra: Body = {};
      const deal = o.positionId ? lastDeal(o.positionId, o.id) : undefined;
      extra.order = wire.order(o, { status: OrderStatus.FILLED, executionPrice: deal?.price ?? null });
      const pos = o.positionId ? broker.positions(accountId).find((p) => p.id === o.positionId) : undefined;
      if (pos) extra.position = wire.position(pos);
      if (deal) extra.deal = wire.deal(deal);
      return [base(ExecutionType.ORDER_FILLED, extra)];
    }
  }
}
