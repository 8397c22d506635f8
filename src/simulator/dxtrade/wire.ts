import { Decimal } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import type { SimBrokerApi, SimDeal, SimInstrument } from '../contract.js';

/**
 * DX REST API JSON of the simulated book, as the spec's Position, Order (with its Order Leg and Executions),
 * Instrument, Instrument Details and Account Metrics. Quantities in units: lots x the instrument's lotSize.
 */

const STATUS: Record<Order['status'], string> = {
  pending: 'WORKING',
  filled: 'COMPLETED',
  cancelled: 'CANCELLED',
  rejected: 'REJECTED',
};

/** Ids are 64-bit decimal strings; the numeric orderId is the part past the simulator's id base. */
export const numericId = (id: string): number => Number(BigInt(id) % 1_000_000_000_000n);

export const units = (inst: SimInstrument, lots: Decimal): string => lots.mul(inst.contractSize).toFixed();
export const lots = (inst: SimInstrument, units: Decimal): Decimal => units.div(inst.contractSize);

export function positionJson(account: string, inst: SimInstrument, p: Position): Record<string, unknown> {
  return {
    account,
    version: Date.parse(p.openedAt),
    positionCode: p.id,
    symbol: p.symbol,
    quantity: units(inst, p.volume),
    side: p.side === 'buy' ? 'BUY' : 'SELL',
    openTime: p.openedAt,
    openPrice: p.openPrice.toFixed(),
    lastUpdateTime: p.openedAt,
  };
}

function executionJson(account: string, inst: SimInstrument, o: Order, d: SimDeal, filled: Decimal) {
  const qty = d.volume.mul(inst.contractSize);
  return {
    account,
    executionCode: d.id,
    orderCode: o.id,
    updateOrderId: numericId(o.id),
    version: Date.parse(d.time),
    clientOrderId: o.tag ?? o.id,
    actionCode: `${o.id}:${d.id}`,
    instrument: o.symbol,
    status: STATUS[o.status],
    finalStatus: o.status !== 'pending',
    filledQuantity: filled.mul(inst.contractSize).toFixed(),
    lastQuantity: (d.side === 'buy' ? qty : qty.neg()).toFixed(),
    remainingQuantity: o.volume.minus(filled).mul(inst.contractSize).toFixed(),
    lastPrice: d.price.toFixed(),
    averagePrice: d.price.toFixed(),
    transactionTime: d.time,
  };
}

/** An order of the book. `clientOrderId` is the orderCode the client sent (the simulator's tag), else our id. */
export function orderJson(broker: SimBrokerApi, accountId: string, account: string, o: Order): Record<string, unknown> {
  const inst = broker.instrument(o.symbol)!;
  const deals = broker.dealsOf(accountId, { orderId: o.id });
  const close = deals.some((d) => d.entry === 'out');
  let filled = new Decimal(0);
  const executions = deals.map((d) => {
    filled = filled.plus(d.volume);
    return executionJson(account, inst, o, d, filled);
  });
  const avg = deals.length
    ? deals
        .reduce((s, d) => s.plus(d.price.mul(d.volume)), new Decimal(0))
        .div(filled)
        .toDecimalPlaces(inst.digits)
    : new Decimal(0);
  const type = o.type === 'limit' ? 'LIMIT' : o.type === 'stop' ? 'STOP' : 'MARKET';
  return {
    account,
    version: Date.parse(o.updatedAt),
    orderId: numericId(o.id),
    orderCode: o.id,
    clientOrderId: o.tag ?? o.id,
    actionCode: `${o.id}:${Date.parse(o.updatedAt)}`,
    legCount: 1,
    type,
    instrument: o.symbol,
    status: STATUS[o.status],
    finalStatus: o.status !== 'pending',
    legs: [
      {
        instrument: o.symbol,
        positionEffect: close ? 'CLOSE' : 'OPEN',
        // The spec shows positionCode on CLOSE legs; the simulator also names the position an OPEN leg made.
        ...(o.positionId ? { positionCode: o.positionId } : {}),
        side: o.side === 'buy' ? 'BUY' : 'SELL',
        ...(o.price ? { price: o.price.toFixed() } : {}),
        legRatio: 1,
        quantity: units(inst, o.volume),
        filledQuantity: units(inst, filled),
        remainingQuantity: o.status === 'pending' ? units(inst, o.volume.minus(filled)) : '0',
        averagePrice: avg.toFixed(),
      },
    ],
    side: o.side === 'buy' ? 'BUY' : 'SELL',
    tif: o.type === 'market' ? 'IOC' : 'GTC',
    ...(o.type === 'limit' ? { limitPrice: o.price!.toFixed() } : {}),
    ...(o.type === 'stop' ? { stopPrice: o.price!.toFixed() } : {}),
    issueTime: o.createdAt,
    transactionTime: o.updatedAt,
    executions,
  };
}

/** A position-attached protection order (SL: STOP, TP: LIMIT) for a position's level. */
export function protectionJson(
  account: string,
  inst: SimInstrument,
  p: Position,
  kind: 'sl' | 'tp',
  code: string,
  version: number,
): Record<string, unknown> {
  const level = (kind === 'sl' ? p.stopLoss : p.takeProfit)!.toFixed();
  const side = p.side === 'buy' ? 'SELL' : 'BUY';
  return {
    account,
    version,
    orderId: numericId(p.id) * 10 + (kind === 'sl' ? 1 : 2),
    orderCode: code,
    clientOrderId: code,
    actionCode: `${code}:${version}`,
    legCount: 1,
    type: kind === 'sl' ? 'STOP' : 'LIMIT',
    instrument: p.symbol,
    status: 'WORKING',
    finalStatus: false,
    legs: [
      {
        instrument: p.symbol,
        positionEffect: 'CLOSE',
        positionCode: p.id,
        side,
        price: level,
        legRatio: 1,
        filledQuantity: '0',
        remainingQuantity: units(inst, p.volume),
        averagePrice: '0',
      },
    ],
    side,
    tif: 'GTC',
    ...(kind === 'sl' ? { stopPrice: level } : { limitPrice: level }),
    issueTime: p.openedAt,
    transactionTime: p.openedAt,
    executions: [],
  };
}

export function instrumentJson(inst: SimInstrument): Record<string, unknown> {
  return {
    type: 'FOREX',
    symbol: inst.symbol,
    version: 1,
    description: inst.description,
    priceIncrement: inst.tickSize.toFixed(),
    pipSize: inst.tickSize.mul(10).toFixed(),
    currency: inst.symbol.slice(3) || 'USD',
    lotSize: inst.contractSize.toFixed(),
  };
}

export function instrumentDetailsJson(account: string, inst: SimInstrument): Record<string, unknown> {
  return {
    account,
    type: 'FOREX',
    symbol: inst.symbol,
    tradingStatus: 'FULL',
    minOrderSize: units(inst, inst.minVolume),
    maxOrderSize: units(inst, inst.maxVolume),
    minOrderSizeIncrement: units(inst, inst.volumeStep),
    marginRate: { value: '0.01' },
  };
}
