import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { parseExecutionEvent, parseOrder, parsePosition, parseSymbol, toInstrumentSpec } from './parse.js';
import { ExecutionType, OrderStatus, OrderType, PositionStatus, TradeSide } from '../../protocols/ctrader/enums.js';
import type { ExecutionEventMsg, PositionMsg } from '../../protocols/ctrader/messages.js';
import { lotsToWireVolume, toRelative } from '../../protocols/ctrader/units.js';

const sym = parseSymbol(
  { symbolId: '1', symbolName: 'EURUSD' },
  {
    symbolId: '1',
    digits: 5,
    pipPosition: 4,
    lotSize: '10000000',
    minVolume: '100000',
    maxVolume: '1000000000',
    stepVolume: '100000',
  },
);
const lookup = (id: string) => (id === '1' ? sym : undefined);
const position = (over: Partial<PositionMsg> = {}): PositionMsg => ({
  positionId: '7200000000000000001',
  tradeData: {
    symbolId: '1',
    volume: '2000000',
    tradeSide: TradeSide.SELL,
    openTimestamp: '1700000000000',
    label: 'tag1',
  },
  positionStatus: PositionStatus.OPEN,
  swap: '0',
  price: 1.08003,
  stopLoss: 1.085,
  ...over,
});

describe('cTrader parse', () => {
  it('symbol volumes come back in lots through lotSize', () => {
    const spec = toInstrumentSpec(sym);
    expect([spec.minVolume, spec.volumeStep, spec.maxVolume, spec.contractSize, spec.tickSize].map(String)).toEqual([
      '0.01',
      '0.01',
      '100',
      '100000',
      '0.00001',
    ]);
    expect(lotsToWireVolume(dec('0.01'), sym.lotSize)).toBe('100000');
    expect(lotsToWireVolume(dec('0.00000001'), sym.lotSize)).toBeNull();
    expect(toRelative(dec('0.0050'))).toBe('500');
  });

  it('positions keep 64-bit ids as strings and prices as exact decimals', () => {
    const p = parsePosition(position(), sym);
    expect(p).toMatchObject({
      id: '7200000000000000001',
      symbol: 'EURUSD',
      side: 'sell',
      tag: 'tag1',
      takeProfit: null,
    });
    expect([p.volume, p.openPrice, p.stopLoss].map(String)).toEqual(['0.2', '1.08003', '1.085']);
  });

  it('orders map type and status; protection orders are not orders of the port', () => {
    const base = {
      orderId: '9',
      tradeData: { symbolId: '1', volume: '100000', tradeSide: TradeSide.BUY },
      orderStatus: OrderStatus.ACCEPTED,
    };
    expect(
      parseOrder({ ...base, orderType: OrderType.LIMIT, limitPrice: 1.07, clientOrderId: 't' }, sym),
    ).toMatchObject({ type: 'limit', status: 'pending', tag: 't' });
    expect(parseOrder({ ...base, orderType: OrderType.STOP_LOSS_TAKE_PROFIT }, sym)).toBeNull();
  });

  it('execution events become the same broker events the simulator reports', () => {
    const fill: ExecutionEventMsg = {
      ctidTraderAccountId: '1',
      executionType: ExecutionType.ORDER_FILLED,
      position: position(),
    };
    expect(parseExecutionEvent(fill, lookup).map((e) => e.kind)).toEqual(['position_opened']);
    const closing: ExecutionEventMsg = {
      ...fill,
      position: position({ positionStatus: PositionStatus.CLOSED }),
      deal: {
        dealId: '1',
        orderId: '2',
        positionId: '7200000000000000001',
        volume: '2000000',
        filledVolume: '2000000',
        symbolId: '1',
        createTimestamp: '1',
        executionTimestamp: '1700000001000',
        tradeSide: TradeSide.BUY,
        dealStatus: 2,
        executionPrice: 1.079,
        closePositionDetail: {
          entryPrice: 1.08003,
          grossProfit: '2006',
          swap: '0',
          commission: '0',
          balance: '0',
          closedVolume: '2000000',
          moneyDigits: 2,
        },
      },
    };
    const [closed] = parseExecutionEvent(closing, lookup);
    expect(closed).toMatchObject({ kind: 'position_closed', at: '2023-11-14T22:13:21.000Z' });
    expect([closed!.closedVolume, closed!.position!.profit, closed!.position!.currentPrice].map(String)).toEqual([
      '0.2',
      '20.06',
      '1.079',
    ]);
    const accepted: ExecutionEventMsg = {
      ctidTraderAccountId: '1',
      executionType: ExecutionType.ORDER_ACCEPTED,
      order: {
        orderId: '3',
        tradeData: { symbolId: '1', volume: '100000', tradeSide: 1 },
        orderType: OrderType.MARKET,
        orderStatus: 1,
      },
    };
    expect(parseExecutionEvent(accepted, lookup)).toEqual([]);
    expect(
      parseExecutionEvent({ ...accepted, order: { ...accepted.order!, orderType: OrderType.LIMIT } }, lookup).map(
        (e) => e.kind,
      ),
    ).toEqual(['order_placed']);
  });
});
