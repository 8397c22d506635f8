/**
 * Column ids of the positional rows the TradeLocker API returns. The server may serve them in any order
 * (`shuffle`), because the real API only promises that /trade/config names each column; a client that reads
 * by position instead of by id must break here first, not at a broker.
 */

export const POSITION_COLUMNS = [
  'id',
  'tradableInstrumentId',
  'routeId',
  'side',
  'qty',
  'avgPrice',
  'stopLossId',
  'takeProfitId',
  'openDate',
  'unrealizedPl',
  'strategyId',
] as const;

export const ORDER_COLUMNS = [
  'id',
  'tradableInstrumentId',
  'routeId',
  'qty',
  'side',
  'type',
  'status',
  'filledQty',
  'avgPrice',
  'price',
  'stopPrice',
  'validity',
  'expireDate',
  'createdDate',
  'lastModified',
  'isOpen',
  'positionId',
  'stopLoss',
  'stopLossType',
  'takeProfit',
  'takeProfitType',
  'strategyId',
] as const;

export const FILLED_ORDER_COLUMNS = [
  'id',
  'price',
  'side',
  'createdDate',
  'qty',
  'orderId',
  'positionId',
  'tradableInstrumentId',
] as const;

export const ACCOUNT_DETAILS_COLUMNS = [
  'balance',
  'projectedBalance',
  'availableFunds',
  'blockedBalance',
  'cashBalance',
  'unsettledCash',
  'withdrawalAvailable',
  'stocksValue',
  'optionValue',
  'initialMarginReq',
  'maintMarginReq',
  'marginWarningLevel',
  'blockedForStocks',
  'stockOrdersReq',
  'stopOutLevel',
  'warningMarginReq',
  'marginBeforeWarning',
  'todayGross',
  'todayNet',
  'todayFees',
  'todayVolume',
  'todayTradesCount',
  'openGrossPnL',
  'openNetPnL',
  'positionsCount',
  'ordersCount',
] as const;

export interface ColumnSet {
  positions: string[];
  orders: string[];
  ordersHistory: string[];
  filledOrders: string[];
  accountDetails: string[];
}

/** Deterministic Fisher-Yates so a failing test can be replayed with the same seed. */
function shuffled(ids: readonly string[], seed: number): string[] {
  const out = [...ids];
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function columnSet(shuffleSeed?: number): ColumnSet {
  const order = (ids: readonly string[], k: number) =>
    shuffleSeed === undefined ? [...ids] : shuffled(ids, shuffleSeed + k);
  return {
    positions: order(POSITION_COLUMNS, 1),
    orders: order(ORDER_COLUMNS, 2),
    ordersHistory: order(ORDER_COLUMNS, 3),
    filledOrders: order(FILLED_ORDER_COLUMNS, 4),
    accountDetails: order(ACCOUNT_DETAILS_COLUMNS, 5),
  };
}

export function toRow<T>(columns: string[], values: Record<string, T>): (T | null)[] {
  return columns.map((c) => (c in values ? values[c]! : null));
}

export function panelConfig(id: string, title: string, columns: string[]) {
  return { id, title, columns: columns.map((c) => ({ id: c, description: c })) };
}
