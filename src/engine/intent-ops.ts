import type { Decimal } from '../domain/decimal.js';
import type { CopyRule } from '../domain/copy-rule.js';
import { intentAction } from '../domain/intent-action.js';
import type { BrokerAdapter, ModifyOrderChange, OrderOutcome } from '../platforms/adapter.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { IntentOp } from './intent-op.js';
import { linkedFill } from './intent-verify.js';

export type { IntentOp } from './intent-op.js';
export { verifyOp } from './intent-verify.js';

type OpRow = Pick<
  CopyIntent,
  'action' | 'symbol' | 'side' | 'plannedVolume' | 'plannedPrice' | 'stopLoss' | 'takeProfit' | 'targetId' | 'tag'
>;
type OpTrade = Pick<Trade, 'orderType' | 'masterPositionId' | 'masterOrderId'>;

/** The write a stored row stands for, the same at its first dispatch and at its settling (see IntentOp). */
export function opOf(
  i: OpRow,
  t: OpTrade,
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
    case 'open_on_fill':
      return exposureOf(i, t, action === 'open');
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
    case 'order_modified':
      return { kind: 'modify_order', orderId: i.targetId!, change: orderChangeOf(i, rule) };
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

/**
 * Exposure added at the Slave: the Master's own order type for an open (a pending order is copied pending), at
 * market for everything else (an increase, a heal, the fill of an order the Slave could not copy pending).
 */
function exposureOf(i: OpRow, t: OpTrade, asMasterOrdered: boolean): IntentOp {
  const type = asMasterOrdered ? t.orderType : 'market';
  const price = type === 'market' ? null : i.plannedPrice;
  return {
    kind: 'place',
    req: {
      symbol: i.symbol,
      side: i.side,
      type,
      volume: i.plannedVolume!,
      price,
      stopLoss: i.stopLoss,
      takeProfit: i.takeProfit,
      tag: i.tag,
    },
    link: type === 'market' ? 'position' : 'order',
    masterItemId: type === 'market' ? t.masterPositionId : t.masterOrderId,
  };
}

/** A pending order's change: the levels the rule does not copy are left out, so the Slave's own stay. */
function orderChangeOf(i: OpRow, rule: CopyRule): ModifyOrderChange {
  const change: ModifyOrderChange = {};
  if (i.plannedPrice !== null) change.price = i.plannedPrice;
  if (i.plannedVolume) change.volume = i.plannedVolume;
  if (rule.copyStopLoss) change.stopLoss = i.stopLoss;
  if (rule.copyTakeProfit) change.takeProfit = i.takeProfit;
  return change;
}

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
