import type { Decimal } from '../domain/decimal.js';
import {
  confirmed,
  type BrokerAdapter,
  type ConfirmedOutcome,
  type OrderOutcome,
  type TagLookup,
} from '../platforms/adapter.js';
import type { IntentOp } from './intent-op.js';

/** What a look at the broker proved about one write. */
export type Verdict =
  | { state: 'applied'; outcome: OrderOutcome }
  | { state: 'absent' }
  | { state: 'unknown'; message: string };
type Proven = Exclude<Verdict, { state: 'unknown' }>;

const eqDec = (a: Decimal | null | undefined, b: Decimal | null | undefined) =>
  (a ?? null) === null || (b ?? null) === null ? (a ?? null) === (b ?? null) : a!.eq(b!);

/** The Slave's position as the outcome of an open or a followed fill, when the broker shows one. */
export function linkedFill(
  order: { id: string; status: string; positionId: string | null; filledVolume: Decimal; price: Decimal | null } | null,
  position: { id: string; volume: Decimal; openPrice: Decimal; openedAt: string } | null,
): ConfirmedOutcome | null {
  const positionId = position?.id ?? (order?.status === 'filled' ? order.positionId : null);
  if (!positionId) return null;
  return confirmed({
    brokerOrderId: order?.id ?? null,
    positionId,
    filledVolume: position?.volume ?? order?.filledVolume ?? null,
    fillPrice: position?.openPrice ?? null,
    brokerTime: position?.openedAt ?? null,
    raw: 'observed',
  });
}

/**
 * Settles an unknown outcome by looking at the broker: `applied` with what it shows, `absent` when proven
 * not applied, `unknown` when the broker could not be asked. Never sends anything.
 */
export async function verifyOp(
  adapter: BrokerAdapter,
  op: IntentOp,
  tags: string[],
  find: (tag: string) => Promise<TagLookup> = (tag) => adapter.findByTag(tag),
): Promise<Verdict> {
  try {
    switch (op.kind) {
      case 'place':
      case 'fill':
        return await placedByTag(op, tags, find);
      case 'close':
        return await closedAtBroker(adapter, op);
      case 'modify':
        return await modifiedAtBroker(adapter, op);
      case 'cancel': {
        const o = (await adapter.listOrders()).find((x) => x.id === op.orderId);
        return o ? { state: 'absent' } : { state: 'applied', outcome: confirmed({ brokerOrderId: op.orderId }) };
      }
      case 'modify_order':
        return await orderModifiedAtBroker(adapter, op);
    }
  } catch (err) {
    return { state: 'unknown', message: err instanceof Error ? err.message : String(err) };
  }
}

/** An open (or a followed fill) is found by its tags, newest attempt's first; a fill also by its pending copy's. */
async function placedByTag(
  op: Extract<IntentOp, { kind: 'place' | 'fill' }>,
  tags: string[],
  find: (tag: string) => Promise<TagLookup>,
): Promise<Proven> {
  const lookups = [...tags, ...(op.kind === 'fill' && op.origTag ? [op.origTag] : [])];
  for (const tag of lookups) {
    const f = await find(tag);
    if (f.position) return { state: 'applied', outcome: linkedFill(f.order ?? null, f.position)! };
    if (!f.order) continue;
    if (f.order.status === 'filled')
      return { state: 'applied', outcome: linkedFill(f.order, null) ?? confirmed({ brokerOrderId: f.order.id }) };
    if (f.order.status === 'pending') {
      if (op.kind === 'fill') continue; // the Slave's own pending copy is still waiting: not this write
      return { state: 'applied', outcome: confirmed({ brokerOrderId: f.order.id, brokerTime: f.order.createdAt }) };
    }
    if (op.kind === 'place')
      return {
        state: 'applied',
        outcome: {
          kind: 'rejected',
          code: `order_${f.order.status}`,
          message: `the broker has the order as ${f.order.status}`,
        },
      };
  }
  return { state: 'absent' };
}

/** A close applied: the position is gone, or (a partial close) down to what was left of it. */
async function closedAtBroker(adapter: BrokerAdapter, op: Extract<IntentOp, { kind: 'close' }>): Promise<Proven> {
  const p = (await adapter.listPositions()).find((x) => x.id === op.positionId);
  if (!p)
    return {
      state: 'applied',
      outcome: confirmed({ positionId: op.positionId, filledVolume: op.volume ?? op.before }),
    };
  if (op.volume && op.before && p.volume.lte(op.before.minus(op.volume)))
    return {
      state: 'applied',
      outcome: confirmed({ positionId: op.positionId, filledVolume: op.before.minus(p.volume) }),
    };
  return { state: 'absent' };
}

/** A modify applied: the position carries the levels it set (a level the rule keeps is not compared). */
async function modifiedAtBroker(adapter: BrokerAdapter, op: Extract<IntentOp, { kind: 'modify' }>): Promise<Proven> {
  const p = (await adapter.listPositions()).find((x) => x.id === op.positionId);
  if (!p)
    return {
      state: 'applied',
      outcome: { kind: 'rejected', code: 'position_not_found', message: `no position ${op.positionId}` },
    };
  const ok = (op.keepSl || eqDec(p.stopLoss, op.stopLoss)) && (op.keepTp || eqDec(p.takeProfit, op.takeProfit));
  return ok ? { state: 'applied', outcome: confirmed({ positionId: p.id }) } : { state: 'absent' };
}

/** A pending order's change applied: every field it changed reads back as set. */
async function orderModifiedAtBroker(
  adapter: BrokerAdapter,
  op: Extract<IntentOp, { kind: 'modify_order' }>,
): Promise<Proven> {
  const o = (await adapter.listOrders()).find((x) => x.id === op.orderId);
  if (!o)
    return {
      state: 'applied',
      outcome: { kind: 'rejected', code: 'order_not_found', message: `no pending order ${op.orderId}` },
    };
  const c = op.change;
  const ok =
    (c.price === undefined || eqDec(o.price, c.price)) &&
    (c.volume === undefined || o.volume.eq(c.volume)) &&
    (c.stopLoss === undefined || eqDec(o.stopLoss, c.stopLoss)) &&
    (c.takeProfit === undefined || eqDec(o.takeProfit, c.takeProfit));
  return ok ? { state: 'applied', outcome: confirmed({ brokerOrderId: o.id }) } : { state: 'absent' };
}
