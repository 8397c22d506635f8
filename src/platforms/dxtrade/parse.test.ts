import { describe, expect, it } from 'vitest';
import { dealOf, parseInstrument, parseLogin, parseOrder, parsePosition, parseUser } from './parse.js';

const order = {
  account: 'default:1001',
  version: 5,
  orderId: 77,
  orderCode: '7200000000000000077',
  clientOrderId: 'cfTAG1',
  type: 'MARKET',
  instrument: 'EURUSD',
  status: 'COMPLETED',
  finalStatus: true,
  legs: [
    {
      instrument: 'EURUSD',
      positionEffect: 'OPEN',
      positionCode: '7200000000000000078',
      side: 'BUY',
      legRatio: 1,
      quantity: '20000',
      filledQuantity: '20000',
      remainingQuantity: '0',
      averagePrice: '1.08012',
    },
  ],
  side: 'BUY',
  tif: 'IOC',
  issueTime: '2026-12-07T10:00:00.000Z',
  transactionTime: '2026-12-07T10:00:00.120Z',
  executions: [
    { executionCode: 'e1', lastQuantity: '0', transactionTime: '2026-12-07T10:00:00.010Z' },
    { executionCode: 'e2', lastQuantity: '20000', lastPrice: '1.08012', transactionTime: '2026-12-07T10:00:00.120Z' },
  ],
};

describe('DXtrade parsing', () => {
  it('login: the token and a timeout in ms or as an HH:MM:SS interval', () => {
    expect(parseLogin({ sessionToken: 'abc', timeout: 1_800_000 })).toEqual({ token: 'abc', timeoutMs: 1_800_000 });
    expect(parseLogin({ sessionToken: 'abc', timeout: '00:30:00' })).toEqual({ token: 'abc', timeoutMs: 1_800_000 });
    expect(() => parseLogin({ timeout: 1 })).toThrow(/sessionToken/);
  });

  it('user details: each account with its currency and isPositionBased as hedging (absent = netting)', () => {
    const body = {
      userDetails: [
        {
          login: 'trader',
          domain: 'default',
          accounts: [
            { account: 'default:1', baseCurrency: 'USD', isPositionBased: true },
            { account: 'default:2', baseCurrency: 'EUR' },
          ],
        },
      ],
    };
    expect(parseUser(body)).toEqual([
      { account: 'default:1', currency: 'USD', hedging: true },
      { account: 'default:2', currency: 'EUR', hedging: false },
    ]);
  });

  it('an order: orderCode is the id, clientOrderId the tag, quantities in units, fills only from executions that filled', () => {
    const o = parseOrder(order);
    expect(o.order).toMatchObject({
      id: order.orderCode,
      tag: 'cfTAG1',
      side: 'buy',
      type: 'market',
      status: 'filled',
    });
    expect(o.order.volume.toString()).toBe('20000');
    expect(o.order.positionId).toBe('7200000000000000078');
    expect(o.version).toBe('5');
    expect(o.executions.map((e) => e.id)).toEqual(['e2']);
    const deal = dealOf(o, o.executions[0]!, 'cfTAG1');
    expect(deal).toMatchObject({ entry: 'in', positionId: '7200000000000000078', profit: null, tag: 'cfTAG1' });
    expect(parseOrder({ ...order, legs: [{ ...order.legs[0], positionEffect: 'CLOSE' }] }).positionEffect).toBe(
      'CLOSE',
    );
    expect(() => parseOrder({ ...order, status: 'WHATEVER' })).toThrow(/status/);
  });

  it('a position: positionCode, unsigned quantity and side', () => {
    const p = parsePosition({
      positionCode: 'P1',
      symbol: 'EURUSD',
      quantity: '10000',
      side: 'SELL',
      openTime: '2026-12-07T10:00:00Z',
      openPrice: '1.07990',
    });
    expect(p).toMatchObject({ id: 'P1', side: 'sell', tag: null });
    expect(p.volume.toString()).toBe('10000');
  });

  it('an instrument: tick and lot size from the instrument, sizes from the account details in lots; unknown gives null', () => {
    const general = { instruments: [{ symbol: 'EURUSD', priceIncrement: '0.00001', lotSize: '100000' }] };
    const details = {
      instruments: [
        { symbol: 'EURUSD', minOrderSize: '1000', maxOrderSize: { value: '5000000' }, minOrderSizeIncrement: '1000' },
      ],
    };
    const spec = parseInstrument(general, details, 'EURUSD')!;
    expect([spec.tickSize, spec.contractSize, spec.minVolume, spec.maxVolume, spec.volumeStep].map(String)).toEqual([
      '0.00001',
      '100000',
      '0.01',
      '50',
      '0.01',
    ]);
    expect(parseInstrument({ instruments: [] }, { instruments: [] }, 'EURUSD')).toBeNull();
  });
});
