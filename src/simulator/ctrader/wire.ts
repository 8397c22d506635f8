import { Decimal, dec } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import {
  DealStatus,
  OrderStatus,
  OrderType,
  PositionStatus,
  TimeInForce,
  TradeSide,
} from '../../protocols/ctrader/enums.js';
import { lotSizeFromContractSize, toMoney } from '../../protocols/ctrader/units.js';
import type { SimAccount, SimAccountState, SimBrokerApi, SimDeal, SimInstrument } from '../contract.js';
import { assetIdOf, assetsOfSymbol, ctidOf, traderLoginOf } from './ids.js';

/** Sim model -> Open API message bodies (plain objects for protobufjs fromObject; int64 as strings). */

export const MONEY_DIGITS = 2;

type Body = Record<string, unknown>;

const ms = (iso: string): string => String(Date.parse(iso));
const side = (s: 'buy' | 'sell'): number => (s === 'buy' ? TradeSide.BUY : TradeSide.SELL);

export class SimWire {
  constructor(private readonly broker: SimBrokerApi) {}

  inst(symbol: string): SimInstrument {
    const i = this.broker.instrument(symbol);
    if (!i) throw new Error(`unknown instrument ${symbol}`);
    return i;
  }

  lotSize(symbol: string): string {
    return lotSizeFromContractSize(this.inst(symbol).contractSize);
  }

  volume(symbol: string, lots: Decimal): string {
    return lots.mul(this.lotSize(symbol)).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0);
  }

  lots(symbol: string, wireVolume: string): Decimal {
    return dec(wireVolume).div(this.lotSize(symbol));
  }

  symbolId(symbol: string): string {
    return String(this.inst(symbol).numericId);
  }

  lightSymbol(i: SimInstrument): Body {
    const { base, quote } = assetsOfSymbol(i.symbol);
    return {
      symbolId: String(i.numericId),
      symbolName: i.symbol,
      enabled: true,
      baseAssetId: assetIdOf(base),
      quoteAssetId: assetIdOf(quote),
      symbolCategoryId: '1',
      description: i.description,
    };
  }

  symbol(i: SimInstrument): Body {
    const lotSize = dec(lotSizeFromContractSize(i.contractSize));
    const cents = (lots: Decimal) => lots.mul(lotSize).toFixed(0);
    // pipPosition: FX pips are one digit above the last quoted digit; elsewhere the tick is the pip.
    const pipPosition = i.digits === 5 || i.digits === 3 ? i.digits - 1 : i.digits;
    return {
      symbolId: String(i.numericId),
      digits: i.digits,
      pipPosition,
      enableShortSelling: true,
      maxVolume: cents(i.maxVolume),
      minVolume: cents(i.minVolume),
      stepVolume: cents(i.volumeStep),
      lotSize: lotSize.toFixed(0),
      tradingMode: 0,
      measurementUnits: assetsOfSymbol(i.symbol).base,
    };
  }

  trader(acc: SimAccount, state: SimAccountState): Body {
    return {
      ctidTraderAccountId: ctidOf(acc),
      balance: toMoney(state.balance, MONEY_DIGITS),
      depositAssetId: assetIdOf(acc.currency),
      leverageInCents: acc.leverage * 100,
      traderLogin: traderLoginOf(acc),
      accountType: acc.hedging ? 0 : 1,
      brokerName: acc.meta['brokerName'] ?? 'Copytrade Simulator',
      registrationTimestamp: ms(acc.createdAt),
      moneyDigits: MONEY_DIGITS,
      accessRights: 0,
    };
  }

  tradeData(symbol: string, s: 'buy' | 'sell', lots: Decimal, openedAt: string, tag: string | null): Body {
    const td: Body = {
      symbolId: this.symbolId(symbol),
      volume: this.volume(symbol, lots),
      tradeSide: side(s),
      openTimestamp: ms(openedAt),
    };
    if (tag) td.label = tag;
    return td;
  }

  position(p: Position, status: number = PositionStatus.OPEN, volumeOverride?: Decimal): Body {
    const body: Body = {
      positionId: p.id,
      tradeData: this.tradeData(p.symbol, p.side, volumeOverride ?? p.volume, p.openedAt, p.tag),
      positionStatus: status,
      swap: '0',
      price: p.openPrice.toNumber(),
      utcLastUpdateTimestamp: String(Date.now()),
      commission: '0',
      moneyDigits: MONEY_DIGITS,
    };
    if (p.stopLoss) body.stopLoss = p.stopLoss.toNumber();
    if (p.takeProfit) body.takeProfit = p.takeProfit.toNumber();
    return body;
  }

  order(o: Order, opts: { status?: number; executionPrice?: Decimal | null; closing?: boolean } = {}): Body {
    const type = o.type === 'limit' ? OrderType.LIMIT : o.type === 'stop' ? OrderType.STOP : OrderType.MARKET;
    const body: Body = {
      orderId: o.id,
      tradeData: this.tradeData(o.symbol, o.side, o.volume, o.createdAt, o.tag),
      orderType: type,
      orderStatus: opts.status ?? orderStatus(o),
      executedVolume: this.volume(o.symbol, o.filledVolume),
      utcLastUpdateTimestamp: ms(o.updatedAt),
      timeInForce: type === OrderType.MARKET ? TimeInForce.IMMEDIATE_OR_CANCEL : TimeInForce.GOOD_TILL_CANCEL,
    };
    if (o.tag) body.clientOrderId = o.tag;
    if (o.positionId) body.positionId = o.positionId;
    if (o.price && type === OrderType.LIMIT) body.limitPrice = o.price.toNumber();
    if (o.price && type === OrderType.STOP) body.stopPrice = o.price.toNumber();
    if (o.stopLoss) body.stopLoss = o.stopLoss.toNumber();
    if (o.takeProfit) body.takeProfit = o.takeProfit.toNumber();
    if (opts.executionPrice) body.executionPrice = opts.executionPrice.toNumber();
    if (opts.closing) body.closingOrder = true;
    return body;
  }

  /** `requested` is the order's volume (deal.volume), the deal's own volume is what filled. */
  deal(d: SimDeal, ctx: { requested?: Decimal; entryPrice?: Decimal; balance?: Decimal } = {}): Body {
    const partial = ctx.requested !== undefined && d.volume.lt(ctx.requested);
    const body: Body = {
      dealId: d.id,
      orderId: d.orderId,
      positionId: d.positionId,
      volume: this.volume(d.symbol, ctx.requested ?? d.volume),
      filledVolume: this.volume(d.symbol, d.volume),
      symbolId: this.symbolId(d.symbol),
      createTimestamp: ms(d.time),
      executionTimestamp: ms(d.time),
      utcLastUpdateTimestamp: ms(d.time),
      executionPrice: d.price.toNumber(),
      tradeSide: side(d.side),
      dealStatus: partial ? DealStatus.PARTIALLY_FILLED : DealStatus.FILLED,
      commission: '0',
      moneyDigits: MONEY_DIGITS,
    };
    if (d.entry === 'out') {
      body.closePositionDetail = {
        entryPrice: (ctx.entryPrice ?? d.price).toNumber(),
        grossProfit: toMoney(d.profit, MONEY_DIGITS),
        swap: '0',
        commission: '0',
        balance: toMoney(ctx.balance ?? dec(0), MONEY_DIGITS),
        closedVolume: this.volume(d.symbol, d.volume),
        moneyDigits: MONEY_DIGITS,
      };
    }
    return body;
  }

  /** Entry price of a position from its opening deals (volume-weighted), for closing-deal details. */
  entryPrice(accountId: string, positionId: string): Decimal | undefined {
    const ins = this.broker.dealsOf(accountId, { positionId }).filter((d) => d.entry === 'in');
    if (ins.length === 0) return undefined;
    const vol = ins.reduce((s, d) => s.plus(d.volume), dec(0));
    return ins.reduce((s, d) => s.plus(d.price.mul(d.volume)), dec(0)).div(vol);
  }
}

export function orderStatus(o: Order): number {
  switch (o.status) {
    case 'pending':
      return OrderStatus.ACCEPTED;
    case 'filled':
      return OrderStatus.FILLED;
    case 'cancelled':
      return OrderStatus.CANCELLED;
    case 'rejected':
      return OrderStatus.REJECTED;
  }
}
