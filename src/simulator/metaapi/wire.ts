import type { Decimal } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import type { SimAccount, SimBrokerApi, SimDeal, SimInstrument } from '../contract.js';
import { DEFAULT_BROKER, type MtPlatform, mtPlatformOf } from './registry.js';

/**
 * Simulator objects rendered as MetaApi REST models (fact sheet A4). Prices and volumes are JSON numbers,
 * as MetaApi sends them; ids are strings, because the simulator's tickets are past 2^53.
 */

/** Comments sent with a clientId live beside the book: the simulator keeps one tag, MetaApi one comment + clientId. */
export type CommentStore = Map<string, string>;

/** Broker time is broker-local without a zone; +2h is a common MT server offset and keeps clients honest about `time`. */
const BROKER_OFFSET_MS = 2 * 3600_000;

const n = (d: Decimal) => Number(d.toString());
export const brokerTime = (iso: string) =>
  new Date(Date.parse(iso) + BROKER_OFFSET_MS).toISOString().replace('T', ' ').replace('Z', '');

function tagFields(tag: string | null, comments: CommentStore): Record<string, string> {
  if (!tag) return {};
  const comment = comments.get(tag);
  return { clientId: tag, ...(comment ? { comment } : {}) };
}

export function positionDto(p: Position, magic: number, comments: CommentStore): Record<string, unknown> {
  const profit = p.profit === null ? 0 : n(p.profit);
  return {
    id: p.id,
    type: p.side === 'buy' ? 'POSITION_TYPE_BUY' : 'POSITION_TYPE_SELL',
    symbol: p.symbol,
    magic: p.tag ? magic : 0,
    time: p.openedAt,
    brokerTime: brokerTime(p.openedAt),
    updateTime: p.openedAt,
    openPrice: n(p.openPrice),
    ...(p.currentPrice ? { currentPrice: n(p.currentPrice) } : {}),
    currentTickValue: 1,
    ...(p.stopLoss ? { stopLoss: n(p.stopLoss) } : {}),
    ...(p.takeProfit ? { takeProfit: n(p.takeProfit) } : {}),
    volume: n(p.volume),
    profit,
    unrealizedProfit: profit,
    realizedProfit: 0,
    swap: 0,
    commission: 0,
    ...tagFields(p.tag, comments),
    reason: p.tag ? 'POSITION_REASON_EXPERT' : 'POSITION_REASON_CLIENT',
  };
}

const ORDER_TYPE: Record<string, string> = {
  'buy:market': 'ORDER_TYPE_BUY',
  'sell:market': 'ORDER_TYPE_SELL',
  'buy:limit': 'ORDER_TYPE_BUY_LIMIT',
  'sell:limit': 'ORDER_TYPE_SELL_LIMIT',
  'buy:stop': 'ORDER_TYPE_BUY_STOP',
  'sell:stop': 'ORDER_TYPE_SELL_STOP',
};

function orderState(o: Order): string {
  switch (o.status) {
    case 'pending':
      return 'ORDER_STATE_PLACED';
    case 'filled':
      return 'ORDER_STATE_FILLED';
    case 'cancelled':
      return 'ORDER_STATE_CANCELED';
    case 'rejected':
      return 'ORDER_STATE_REJECTED';
  }
}

export function orderDto(
  o: Order,
  ctx: {
    platform: MtPlatform;
    magic: number;
    comments: CommentStore;
    fillPrice: Decimal | null;
    currentPrice: Decimal | null;
  },
): Record<string, unknown> {
  const done = o.status !== 'pending';
  const openPrice = o.price ?? ctx.fillPrice;
  return {
    id: o.id,
    type: ORDER_TYPE[`${o.side}:${o.type}`],
    state: orderState(o),
    magic: o.tag ? ctx.magic : 0,
    time: o.createdAt,
    brokerTime: brokerTime(o.createdAt),
    ...(done ? { doneTime: o.updatedAt, doneBrokerTime: brokerTime(o.updatedAt) } : {}),
    symbol: o.symbol,
    ...(openPrice ? { openPrice: n(openPrice) } : {}),
    ...(!done && ctx.currentPrice ? { currentPrice: n(ctx.currentPrice) } : {}),
    ...(o.stopLoss ? { stopLoss: n(o.stopLoss) } : {}),
    ...(o.takeProfit ? { takeProfit: n(o.takeProfit) } : {}),
    volume: n(o.volume),
    currentVolume: n(o.volume.minus(o.filledVolume)),
    ...(o.positionId ? { positionId: o.positionId } : {}),
    ...tagFields(o.tag, ctx.comments),
    platform: ctx.platform,
    reason: o.tag ? 'ORDER_REASON_EXPERT' : 'ORDER_REASON_CLIENT',
    fillingMode: 'ORDER_FILLING_FOK',
    expirationType: 'ORDER_TIME_GTC',
  };
}

export function dealDto(
  d: SimDeal,
  ctx: { platform: MtPlatform; magic: number; comments: CommentStore },
): Record<string, unknown> {
  return {
    id: d.id,
    type: d.side === 'buy' ? 'DEAL_TYPE_BUY' : 'DEAL_TYPE_SELL',
    entryType: d.entry === 'in' ? 'DEAL_ENTRY_IN' : 'DEAL_ENTRY_OUT',
    symbol: d.symbol,
    magic: d.tag ? ctx.magic : 0,
    time: d.time,
    brokerTime: brokerTime(d.time),
    volume: n(d.volume),
    price: n(d.price),
    commission: 0,
    swap: 0,
    profit: n(d.profit),
    positionId: d.positionId,
    orderId: d.orderId,
    ...tagFields(d.tag, ctx.comments),
    platform: ctx.platform,
    reason: d.tag ? 'DEAL_REASON_EXPERT' : 'DEAL_REASON_CLIENT',
  };
}

export function accountInformationDto(broker: SimBrokerApi, sim: SimAccount): Record<string, unknown> {
  const st = broker.state(sim.id);
  const platform = mtPlatformOf(sim);
  return {
    platform,
    broker: sim.meta.broker ?? DEFAULT_BROKER,
    currency: st.currency,
    server: sim.meta.server,
    balance: n(st.balance),
    equity: n(st.equity),
    margin: n(st.margin),
    freeMargin: n(st.freeMargin),
    leverage: sim.leverage,
    ...(st.margin.gt(0) ? { marginLevel: n(st.equity.div(st.margin).mul(100).toDecimalPlaces(2)) } : {}),
    tradeAllowed: true,
    investorMode: false,
    // MT4 has no netting; an MT5 account is netting or hedging by its server's setting.
    marginMode:
      platform === 'mt4' || sim.hedging ? 'ACCOUNT_MARGIN_MODE_RETAIL_HEDGING' : 'ACCOUNT_MARGIN_MODE_RETAIL_NETTING',
    name: sim.meta.name ?? `Account ${sim.login}`,
    login: Number(sim.login),
    credit: 0,
    type: 'ACCOUNT_TRADE_MODE_DEMO',
    currencyDigits: 2,
  };
}

export function specificationDto(i: SimInstrument): Record<string, unknown> {
  return {
    symbol: i.symbol,
    description: i.description,
    tickSize: n(i.tickSize),
    minVolume: n(i.minVolume),
    maxVolume: n(i.maxVolume),
    volumeStep: n(i.volumeStep),
    contractSize: n(i.contractSize),
    digits: i.digits,
    fillingModes: ['SYMBOL_FILLING_FOK', 'SYMBOL_FILLING_IOC'],
    executionMode: 'SYMBOL_TRADE_EXECUTION_MARKET',
    tradeMode: 'SYMBOL_TRADE_MODE_FULL',
  };
}

/** Fill price of each order, from its deals (volume-weighted when several). */
export function fillPrices(deals: SimDeal[]): Map<string, Decimal> {
  const acc = new Map<string, { pv: Decimal; v: Decimal }>();
  for (const d of deals) {
    const a = acc.get(d.orderId);
    if (a) acc.set(d.orderId, { pv: a.pv.plus(d.price.mul(d.volume)), v: a.v.plus(d.volume) });
    else acc.set(d.orderId, { pv: d.price.mul(d.volume), v: d.volume });
  }
  return new Map([...acc].map(([id, { pv, v }]) => [id, v.isZero() ? pv : pv.div(v)]));
}
