import type { Decimal } from '../domain/decimal.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { intentAction } from '../domain/intent-action.js';
import {
  confirmed,
  type BrokerAdapter,
  type ConfirmedOutcome,
  type ModifyOrderChange,
  type OrderOutcome,
  type PlaceOrderRequest,
  type TagLookup,
} from '../platforms/adapter.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';

/**
 * The broker write one ledger row stands for. Built from the stored row (and its trade and rule) both when
 * the row is first dispatched and when the settle loop picks it up after a timeout or a restart, so the
 * two paths cannot disagree about what was meant.
 */
export type IntentOp =
  | { kind: 'place'; req: PlaceOrderRequest; link: 'position' | 'order'; masterItemId: string | null }
  | { kind: 'close'; positionId: string; volume: Decimal | null; before: Decimal | null }
  | {
      kind: 'modify';
      positionId: string;
      stopLoss: Decimal | null;
      takeProfit: Decimal | null;
      keepSl: boolean;
      keepTp: boolean;
    }
  | { kind: 'modify_order'; orderId: string; change: ModifyOrderChange }
  | { kind: 'cancel'; orderId: string }
  /** The Master's pending order filled: link the Slave's filled copy, or replace a still-pending one at market. */
  | {
      kind: 'fill';
      orderId: string;
      origTag: string | null;
      req: PlaceOrderRequest;
      masterPositionId: string | null;
      fresh: boolean;
    };

export function opOf(
  i: Pick<
    CopyIntent,
    'action' | 'symbol' | 'side' | 'plannedVolume' | 'plannedPrice' | 'stopLoss' | 'takeProfit' | 'targetId' | 'tag'
  >,
  t: Pick<Trade, 'orderType' | 'masterPositionId' | 'masterOrderId'>,
  rule: CopyRule,
  extra: { origTag?: string | null; fresh?: boolean; linkVolume?: Decimal | null } = {},
): IntentOp {
  const vol = i.plannedVolume;
  const sl = i.stopLoss;
  const tp = i.takeProfit;
  const side = i.side;
  const action = intentAction(i.action);
  switch (action) {
    case 'order_placed':
      return {
        kind: 'place',
        req: {
          symbol: i.symbol,
          side,
          type: t.orderType,
          volume: vol!,
          price: i.plannedPrice,
          stopLoss: sl,
          takeProfit: tp,
          tag: i.tag,
        },
        link: 'order',
        masterItemId: t.masterOrderId,
      };
    case 'open':
    case 'increase':
    case 'heal_open':
    case 'heal_increase':
    case 'open_on_fill': {
      const type = action === 'open' ? t.orderType : 'market';
      const price = type === 'market' ? null : i.plannedPrice;
      return {
        kind: 'place',
        req: { symbol: i.symbol, side, type, volume: vol!, price, stopLoss: sl, takeProfit: tp, tag: i.tag },
        link: type === 'market' ? 'position' : 'order',
        masterItemId: type === 'market' ? t.masterPositionId : t.masterOrderId,
      };
    }
    case 'close':
    case 'heal_close':
      return { kind: 'close', positionId: i.targetId!, volume: null, before: extra.linkVolume ?? null };
    case 'reduce':
    case 'heal_reduce':
      return { kind: 'close', positionId: i.targetId!, volume: vol, before: extra.linkVolume ?? null };
    case 'modify':
      return {
        kind: 'modify',
        positionId: i.targetId!,
        stopLoss: sl,
        takeProfit: tp,
        keepSl: !rule.copyStopLoss,
        keepTp: !rule.copyTakeProfit,
      };
    case 'order_modified': {
      const change: ModifyOrderChange = {};
      if (i.plannedPrice !== null) change.price = i.plannedPrice;
      if (vol) change.volume = vol;
      if (rule.copyStopLoss) change.stopLoss = sl;
      if (rule.copyTakeProfit) change.takeProfit = tp;
      return { kind: 'modify_order', orderId: i.targetId!, change };
    }
    case 'order_cancelled':
      return { kind: 'cancel', orderId: i.targetId! };
    case 'order_filled':
      return {
        kind: 'fill',
        orderId: i.targetId!,
        origTag: extra.origTag ?? null,
        req: { symbol: i.symbol, side, type: 'market', volume: vol!, stopLoss: sl, takeProfit: tp, tag: i.tag },
        masterPositionId: t.masterPositionId,
        fresh: extra.fresh ?? true,
      };
  }
}

const eqDec = (a: Decimal | null | undefined, b: Decimal | null | undefined) =>
  (a ?? null) === null || (b ?? null) === null ? (a ?? null) === (b ?? null) : a!.eq(b!);

/** Runs one broker call inside the account's rate bucket (and, under leases, the write gate). */
export type BrokerCall = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * Sends the op. `call` wraps every broker call in the account's rate bucket. Not itself async: the single-call ops
 * hand back `call`'s promise (`call` never throws, it rejects), so a fan-out's sends do not each carry one more
 * async frame and promise until the broker answers; the two ops that read before they write have their own.
 */
export function executeOp(adapter: BrokerAdapter, op: IntentOp, call: BrokerCall): Promise<OrderOutcome> {
  switch (op.kind) {
    case 'place':
      return call(() => adapter.placeOrder(op.req));
    case 'close':
      return call(() =>
        op.volume ? adapter.closePosition(op.positionId, op.volume) : adapter.closePosition(op.positionId),
      );
    case 'modify':
      return modifyKeeping(adapter, op, call);
    case 'modify_order':
      if (!adapter.modifyOrder)
        return Promise.resolve({
          kind: 'denied',
          code: 'not_supported',
          message: "the Slave's platform cannot change a pending order",
        });
      return call(() => adapter.modifyOrder!(op.orderId, op.change));
    case 'cancel':
      return call(() => adapter.cancelOrder(op.orderId));
    case 'fill':
      return followFill(adapter, op, call);
  }
}

async function modifyKeeping(
  adapter: BrokerAdapter,
  op: Extract<IntentOp, { kind: 'modify' }>,
  call: BrokerCall,
): Promise<OrderOutcome> {
  let { stopLoss, takeProfit } = op;
  if (op.keepSl || op.keepTp) {
    // A level the rule does not copy stays what the Slave has (modifying one must not wipe the other).
    const cur = (await call(() => adapter.listPositions())).find((p) => p.id === op.positionId);
    if (!cur) return { kind: 'rejected', code: 'position_not_found', message: `no position ${op.positionId}` };
    if (op.keepSl) stopLoss = cur.stopLoss;
    if (op.keepTp) takeProfit = cur.takeProfit;
  }
  return call(() => adapter.modifyPosition(op.positionId, { stopLoss, takeProfit }));
}

async function followFill(
  adapter: BrokerAdapter,
  op: Extract<IntentOp, { kind: 'fill' }>,
  call: BrokerCall,
): Promise<OrderOutcome> {
  const orig = op.origTag ? await call(() => adapter.findByTag(op.origTag!)) : null;
  const filled = linkedFill(orig?.order ?? null, orig?.position ?? null);
  if (filled) return filled;
  if (orig?.order?.status === 'pending') {
    const cancelled = await call(() => adapter.cancelOrder(op.orderId));
    if (cancelled.kind !== 'confirmed') {
      // It may have filled in between: look again before deciding anything.
      const again = await call(() => adapter.findByTag(op.origTag!));
      return linkedFill(again.order ?? null, again.position ?? null) ?? cancelled;
    }
    if (!op.fresh)
      return {
        kind: 'rejected',
        code: 'stale_action',
        message: "the Master's order filled too long ago to follow at market; the Slave's pending copy was cancelled",
      };
    return call(() => adapter.placeOrder(op.req));
  }
  return {
    kind: 'rejected',
    code: 'slave_order_gone',
    message: `the Slave's pending copy ${op.orderId} is no longer at the broker (${orig?.order?.status ?? 'not found'})`,
  };
}

function linkedFill(
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
): Promise<{ state: 'applied'; outcome: OrderOutcome } | { state: 'absent' } | { state: 'unknown'; message: string }> {
  try {
    switch (op.kind) {
      case 'place':
      case 'fill': {
        const lookups = [...tags, ...(op.kind === 'fill' && op.origTag ? [op.origTag] : [])];
        for (const tag of lookups) {
          const f = await find(tag);
          if (f.position) return { state: 'applied', outcome: linkedFill(f.order ?? null, f.position)! };
          if (f.order) {
            if (f.order.status === 'filled')
              return {
                state: 'applied',
                outcome: linkedFill(f.order, null) ?? confirmed({ brokerOrderId: f.order.id }),
              };
            if (f.order.status === 'pending') {
              if (op.kind === 'fill') continue; // the Slave's own pending copy is still waiting: not this write
              return {
                state: 'applied',
                outcome: confirmed({ brokerOrderId: f.order.id, brokerTime: f.order.createdAt }),
              };
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
        }
        return { state: 'absent' };
      }
      case 'close': {
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
      case 'modify': {
        const p = (await adapter.listPositions()).find((x) => x.id === op.positionId);
        if (!p)
          return {
            state: 'applied',
            outcome: { kind: 'rejected', code: 'position_not_found', message: `no position ${op.positionId}` },
          };
        const ok = (op.keepSl || eqDec(p.stopLoss, op.stopLoss)) && (op.keepTp || eqDec(p.takeProfit, op.takeProfit));
        return ok ? { state: 'applied', outcome: confirmed({ positionId: p.id }) } : { state: 'absent' };
      }
      case 'cancel': {
        const o = (await adapter.listOrders()).find((x) => x.id === op.orderId);
        return o ? { state: 'absent' } : { state: 'applied', outcome: confirmed({ brokerOrderId: op.orderId }) };
      }
      case 'modify_order': {
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
    }
  } catch (err) {
    return { state: 'unknown', message: err instanceof Error ? err.message : String(err) };
  }
}
