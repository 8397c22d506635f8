import { Decimal } from '../domain/decimal.js';
import type { Order, OrderType, Position, Side } from '../domain/types.js';
import type { ActionKind } from '../domain/intent-action.js';
import type { MasterItem, NewMasterItem } from '../domain/ledger-types.js';

export type { ActionKind };

export interface MasterAction {
  /**
   * Stable id: account + broker position/order id + kind + sequence of the item's actions. Seeing the same
   * action again (a replayed event, a restart diff) gives the same id, which the store refuses twice.
   * Null for orders sent through the API (their trade is recorded before the Master broker is called).
   */
  id: string | null;
  kind: ActionKind;
  masterAccountId: string;
  positionId: string | null;
  orderId: string | null;
  symbol: string;
  side: Side;
  type: OrderType;
  /** open/order: its volume; increase: the added volume; reduce: the closed volume; close: the volume closed. */
  volume: Decimal;
  /** reduce: the Master's volume before it. */
  prevVolume: Decimal | null;
  /** Pending order price, or the Master's fill/close price when known (slippage reference). */
  price: Decimal | null;
  stopLoss: Decimal | null;
  takeProfit: Decimal | null;
  /** When it happened at the broker (ms); copies older than a rule's maxDelayMs are stale. */
  at: number;
  /** The Master item as it stands after the action (the watcher's view, stored with the action). */
  item: NewMasterItem;
  /** The Master trade's magic number and comment where its platform carries them (the rule's filters read them). */
  magic?: number | null;
  comment?: string | null;
}

/** The magic number and comment of a Master position or order as read, for the actions that add exposure. */
const origin = (p: Position | Order) =>
  p.magic == null && p.comment == null ? {} : { magic: p.magic ?? null, comment: p.comment ?? null };

const eqDec = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));

export function positionItem(
  accountId: string,
  p: Position,
  seq: number,
  open: boolean,
  originTradeId: string | null,
): NewMasterItem {
  return {
    accountId,
    kind: 'position',
    itemId: p.id,
    symbol: p.symbol,
    side: p.side,
    orderType: 'market',
    volume: p.volume,
    price: p.openPrice,
    stopLoss: p.stopLoss,
    takeProfit: p.takeProfit,
    tag: p.tag,
    open,
    seq,
    originTradeId,
    openedAt: new Date(p.openedAt),
  };
}

export function orderItem(
  accountId: string,
  o: Order,
  seq: number,
  open: boolean,
  originTradeId: string | null,
): NewMasterItem {
  return {
    accountId,
    kind: 'order',
    itemId: o.id,
    symbol: o.symbol,
    side: o.side,
    orderType: o.type,
    volume: o.volume,
    price: o.price,
    stopLoss: o.stopLoss,
    takeProfit: o.takeProfit,
    tag: o.tag,
    open,
    seq,
    originTradeId,
    openedAt: new Date(o.createdAt),
  };
}

const actionId = (accountId: string, kind: ActionKind, itemId: string, seq: number) =>
  `${accountId}:${itemId}:${kind}:${seq}`;

/**
 * The actions that take a Master position from what we knew (`known`, null = never seen) to what the broker
 * shows now (`now`, null = gone). One pure function for the live stream and the restart diff, so both name
 * the same action the same way.
 */
export function diffPosition(
  accountId: string,
  known: MasterItem | null,
  now: Position | null,
  at: number,
  closePrice: Decimal | null = null,
): MasterAction[] {
  if (!known || !known.open) {
    // Closed before we saw it, or a closed item reported again: nothing to copy.
    if (!now || known) return [];
    return [positionOpened(accountId, known, now, at)];
  }
  if (!now) return [positionClosed(accountId, known, at, closePrice)];
  return positionChanged(accountId, known, now, at, closePrice);
}

type Levels = { id: string; symbol: string; side: Side; stopLoss: Decimal | null; takeProfit: Decimal | null };

/** What every action about a Master position shares, from the position as known or as now. */
const positionBase = (accountId: string, p: Levels, at: number) => ({
  masterAccountId: accountId,
  positionId: p.id,
  orderId: null,
  symbol: p.symbol,
  side: p.side,
  type: 'market' as const,
  stopLoss: p.stopLoss,
  takeProfit: p.takeProfit,
  at,
});

const knownLevels = (known: MasterItem): Levels => ({
  id: known.itemId,
  symbol: known.symbol,
  side: known.side,
  stopLoss: known.stopLoss,
  takeProfit: known.takeProfit,
});

function positionOpened(accountId: string, known: MasterItem | null, now: Position, at: number): MasterAction {
  const seq = (known?.seq ?? 0) + 1;
  return {
    ...positionBase(accountId, now, at),
    id: actionId(accountId, 'open', now.id, seq),
    kind: 'open',
    volume: now.volume,
    prevVolume: null,
    price: now.openPrice,
    item: positionItem(accountId, now, seq, true, known?.originTradeId ?? null),
    ...origin(now),
  };
}

function positionClosed(accountId: string, known: MasterItem, at: number, closePrice: Decimal | null): MasterAction {
  const seq = known.seq + 1;
  const item: NewMasterItem = { ...rowToItem(known), open: false, seq };
  return {
    ...positionBase(accountId, knownLevels(known), at),
    id: actionId(accountId, 'close', known.itemId, seq),
    kind: 'close',
    volume: known.volume,
    prevVolume: known.volume,
    price: closePrice,
    item,
  };
}

/** A position still open: its volume changed (increase or reduce), then its levels (modify), each one action. */
function positionChanged(
  accountId: string,
  known: MasterItem,
  now: Position,
  at: number,
  closePrice: Decimal | null,
): MasterAction[] {
  const out: MasterAction[] = [];
  let seq = known.seq;
  const kv = known.volume;
  const k = knownLevels(known);
  let cur: NewMasterItem = rowToItem(known);
  if (!now.volume.eq(kv)) {
    seq++;
    const kind = now.volume.gt(kv) ? 'increase' : 'reduce';
    cur = { ...cur, volume: now.volume, seq };
    out.push({
      ...positionBase(accountId, { ...k }, at),
      id: actionId(accountId, kind, k.id, seq),
      kind,
      volume: now.volume.minus(kv).abs(),
      prevVolume: kv,
      price: kind === 'reduce' ? closePrice : now.openPrice,
      item: cur,
      ...origin(now),
    });
  }
  if (!eqDec(k.stopLoss, now.stopLoss) || !eqDec(k.takeProfit, now.takeProfit)) {
    seq++;
    cur = { ...cur, stopLoss: now.stopLoss, takeProfit: now.takeProfit, seq };
    out.push({
      ...positionBase(accountId, now, at),
      id: actionId(accountId, 'modify', k.id, seq),
      kind: 'modify',
      volume: now.volume,
      prevVolume: null,
      price: null,
      item: cur,
    });
  }
  return out;
}

/** The same for a pending order; `final` tells how it left the book when it is no longer pending. */
export function diffOrder(
  accountId: string,
  known: MasterItem | null,
  now: Order | null,
  final: Order | null,
  at: number,
): MasterAction[] {
  let seq = known?.seq ?? 0;
  const originTrade = known?.originTradeId ?? null;
  const of = (o: Order, kind: ActionKind, open: boolean): MasterAction => {
    seq++;
    return {
      id: actionId(accountId, kind, o.id, seq),
      kind,
      masterAccountId: accountId,
      positionId: kind === 'order_filled' ? o.positionId : null,
      orderId: o.id,
      symbol: o.symbol,
      side: o.side,
      type: o.type,
      volume: o.volume,
      prevVolume: null,
      price: o.price,
      stopLoss: o.stopLoss,
      takeProfit: o.takeProfit,
      at,
      item: orderItem(accountId, o, seq, open, originTrade),
      ...origin(o),
    };
  };
  if (!known || !known.open) {
    if (now && !known) return [of(now, 'order_placed', true)];
    return [];
  }
  if (now) {
    const changed =
      !now.volume.eq(known.volume) ||
      !eqDec(now.price, known.price) ||
      !eqDec(now.stopLoss, known.stopLoss) ||
      !eqDec(now.takeProfit, known.takeProfit);
    return changed ? [of(now, 'order_modified', true)] : [];
  }
  if (final?.status === 'filled') return [of(final, 'order_filled', false)];
  const gone: Order = final ?? itemToOrder(known);
  return [of(gone, 'order_cancelled', false)];
}

export function rowToItem(r: MasterItem): NewMasterItem {
  const { updatedAt: _u, ...rest } = r;
  return rest;
}

function itemToOrder(r: MasterItem): Order {
  const at = (r.openedAt ?? r.updatedAt).toISOString();
  return {
    id: r.itemId,
    symbol: r.symbol,
    side: r.side,
    type: r.orderType,
    volume: r.volume,
    filledVolume: new Decimal(0),
    price: r.price,
    stopLoss: r.stopLoss,
    takeProfit: r.takeProfit,
    status: 'cancelled',
    positionId: null,
    createdAt: at,
    updatedAt: at,
    tag: r.tag,
  };
}
