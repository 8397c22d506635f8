import { describe, expect, it } from 'vitest';
import { AppError } from '../../domain/errors.js';
import {
  parseAccountDto,
  parseAccountInformation,
  parseDeal,
  parseErrorBody,
  parseOrder,
  parsePosition,
  parseServerSearch,
  parseSymbolSpecification,
  parseTradeResult,
  toDeals,
} from './parse.js';

/** Shapes as the MetaApi model pages show them, with ids past 2^53 as strings. */
const POSITION = {
  id: '7200000000000000042',
  type: 'POSITION_TYPE_SELL',
  symbol: 'EURUSD',
  magic: 1000,
  time: '2026-01-05T10:00:00.000Z',
  brokerTime: '2026-01-05 12:00:00.000',
  updateTime: '2026-01-05T10:00:00.000Z',
  openPrice: 1.08003,
  currentPrice: 1.07991,
  currentTickValue: 1,
  stopLoss: 1.081,
  takeProfit: 0,
  volume: 0.3,
  profit: 3.6,
  swap: 0,
  commission: 0,
  clientId: 'ctabcdefghijklmnop',
  comment: 'copy',
  reason: 'POSITION_REASON_EXPERT',
};

describe('MetaApi parsers', () => {
  it('parses a position: decimals exact, 0 take profit means none, clientId is the tag', () => {
    const p = parsePosition(POSITION);
    expect(p).toMatchObject({
      id: '7200000000000000042',
      side: 'sell',
      symbol: 'EURUSD',
      takeProfit: null,
      tag: 'ctabcdefghijklmnop',
      openedAt: '2026-01-05T10:00:00.000Z',
      // The copy rule's magic number and comment filters read these.
      magic: 1000,
      comment: 'copy',
    });
    expect(parsePosition({ ...POSITION, comment: 'Grid EA' }).comment).toBe('Grid EA');
    expect(parsePosition({ ...POSITION, magic: undefined }).magic).toBeNull();
    expect(p.openPrice.toString()).toBe('1.08003');
    expect(p.volume.toString()).toBe('0.3');
    expect(p.stopLoss?.toString()).toBe('1.081');
    expect(parsePosition({ ...POSITION, id: 12345, clientId: undefined }).id).toBe('12345');
    expect(() => parsePosition({ ...POSITION, type: 'POSITION_TYPE_WHAT' })).toThrow(AppError);
  });

  it('parses pending and history orders, and skips bookkeeping types', () => {
    const pending = parseOrder({
      id: '9',
      type: 'ORDER_TYPE_BUY_LIMIT',
      state: 'ORDER_STATE_PLACED',
      symbol: 'EURUSD',
      time: '2026-01-05T10:00:00Z',
      openPrice: 1.07,
      volume: 0.1,
      currentVolume: 0.1,
      clientId: 't1',
    });
    expect(pending).toMatchObject({ type: 'limit', side: 'buy', status: 'pending', tag: 't1', positionId: null });
    expect(pending?.price?.toString()).toBe('1.07');
    expect(pending?.filledVolume.toString()).toBe('0');
    const done = parseOrder({
      id: '10',
      type: 'ORDER_TYPE_SELL',
      state: 'ORDER_STATE_FILLED',
      symbol: 'EURUSD',
      time: '2026-01-05T10:00:00Z',
      doneTime: '2026-01-05T10:00:01Z',
      openPrice: 1.08,
      volume: 0.2,
      currentVolume: 0.05,
      positionId: 77,
    });
    expect(done).toMatchObject({
      type: 'market',
      price: null,
      status: 'filled',
      positionId: '77',
      updatedAt: '2026-01-05T10:00:01.000Z',
    });
    expect(done?.filledVolume.toString()).toBe('0.15');
    expect(
      parseOrder({
        id: '11',
        type: 'ORDER_TYPE_CLOSE_BY',
        state: 'ORDER_STATE_FILLED',
        symbol: 'EURUSD',
        time: '2026-01-05T10:00:00Z',
        volume: 1,
      }),
    ).toBeNull();
    expect(
      parseOrder(
        {
          id: '12',
          type: 'ORDER_TYPE_SELL_STOP',
          symbol: 'EURUSD',
          time: '2026-01-05T10:00:00Z',
          openPrice: 1.05,
          volume: 1,
        },
        true,
      )?.status,
    ).toBe('pending');
    expect(
      parseOrder({
        id: '13',
        type: 'ORDER_TYPE_BUY',
        state: 'ORDER_STATE_EXPIRED',
        symbol: 'X',
        time: '2026-01-05T10:00:00Z',
        volume: 1,
      })?.status,
    ).toBe('cancelled');
  });

  it('parses deals, including balance deals without a side', () => {
    expect(
      parseDeal({
        id: '1',
        type: 'DEAL_TYPE_BUY',
        entryType: 'DEAL_ENTRY_IN',
        symbol: 'EURUSD',
        time: '2026-01-05T10:00:00Z',
        volume: 0.1,
        price: 1.08,
        profit: 0,
        positionId: '5',
        orderId: '4',
        clientId: 'c',
      }),
    ).toMatchObject({
      side: 'buy',
      entry: 'in',
      positionId: '5',
      orderId: '4',
      tag: 'c',
    });
    expect(parseDeal({ id: '2', type: 'DEAL_TYPE_BALANCE', time: '2026-01-05T10:00:00Z', profit: 1000 })).toMatchObject(
      { side: null, entry: null, symbol: null, volume: null },
    );
  });

  it('reads hedging from marginMode, and MT4 as always hedging', () => {
    const base = {
      broker: 'B',
      currency: 'USD',
      server: 'S',
      balance: 1000.5,
      equity: 1001.25,
      login: 50000001,
      name: 'n',
      tradeAllowed: true,
    };
    expect(
      parseAccountInformation({ ...base, platform: 'mt5', marginMode: 'ACCOUNT_MARGIN_MODE_RETAIL_NETTING' }),
    ).toMatchObject({ hedging: false, login: '50000001' });
    expect(
      parseAccountInformation({ ...base, platform: 'mt5', marginMode: 'ACCOUNT_MARGIN_MODE_RETAIL_HEDGING' }).hedging,
    ).toBe(true);
    expect(parseAccountInformation({ ...base, platform: 'mt4' }).hedging).toBe(true);
    expect(parseAccountInformation({ ...base, platform: 'mt4' }).balance.toString()).toBe('1000.5');
  });

  it('parses symbol specifications, deriving tick size from digits when absent', () => {
    const s = parseSymbolSpecification(
      { symbol: 'US500', digits: 2, minVolume: 0.1, maxVolume: 100, volumeStep: 0.1, contractSize: 1 },
      'US500',
    );
    expect(s.tickSize.toString()).toBe('0.01');
    expect(s.volumeStep.toString()).toBe('0.1');
  });

  it('parses trade results, also in the legacy field names', () => {
    expect(
      parseTradeResult({
        numericCode: 10009,
        stringCode: 'TRADE_RETCODE_DONE',
        message: 'ok',
        orderId: '46870472',
        positionId: 46870472,
      }),
    ).toEqual({
      numericCode: 10009,
      stringCode: 'TRADE_RETCODE_DONE',
      message: 'ok',
      orderId: '46870472',
      positionId: '46870472',
    });
    expect(parseTradeResult({ error: 10006, description: 'TRADE_RETCODE_REJECT' })).toMatchObject({
      numericCode: 10006,
      stringCode: 'TRADE_RETCODE_REJECT',
    });
    expect(() => parseTradeResult({ message: 'no codes' })).toThrow(AppError);
  });

  it('parses provisioning answers and error bodies of every shape', () => {
    expect(parseServerSearch({ 'Raw Trading Ltd': ['ICMarketsSC-Demo', 'ICMarketsSC-MT5'], junk: 3 })).toEqual([
      { broker: 'Raw Trading Ltd', servers: ['ICMarketsSC-Demo', 'ICMarketsSC-MT5'] },
    ]);
    expect(parseAccountDto({ id: 'abc', state: 'DRAFT' })).toMatchObject({
      id: 'abc',
      state: 'DRAFT',
      connectionStatus: 'DISCONNECTED',
    });
    expect(
      parseAccountDto({ _id: 'abc', state: 'DEPLOYED', connectionStatus: 'CONNECTED', login: '123' }),
    ).toMatchObject({ id: 'abc', login: '123' });
    expect(parseErrorBody({ id: 1, error: 'ValidationError', message: 'm', details: 'E_AUTH' })).toMatchObject({
      name: 'ValidationError',
      code: 'E_AUTH',
    });
    expect(
      parseErrorBody({ error: 'ValidationError', details: { code: 'E_RESOURCE_SLOTS', recommendedResourceSlots: 2 } })
        .code,
    ).toBe('E_RESOURCE_SLOTS');
    expect(parseErrorBody({ error: 'ValidationError', details: [{ parameter: 'login' }] }).code).toBeNull();
    expect(parseErrorBody('upstream connect error')).toMatchObject({ name: null, message: 'upstream connect error' });
    expect(parseErrorBody(null)).toMatchObject({ name: null, message: null });
  });

  describe('history deals as Deals', () => {
    const row = (id: string, type: string, entryType: string, volume: number, time: string, extra = {}) =>
      parseDeal({
        id,
        type,
        entryType,
        symbol: 'EURUSD',
        time,
        volume,
        price: 1.08,
        profit: 0,
        positionId: '50',
        orderId: `o${id}`,
        clientId: 'tagA',
        ...extra,
      });
    const brief = (ds: ReturnType<typeof toDeals>) => ds.map((d) => [d.id, d.entry, d.side, d.volume.toString()]);

    it('keeps trade deals only, oldest first, once each: IN is in, OUT and OUT_BY are out', () => {
      const rows = [
        row('12', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_OUT_BY', 0.1, '2026-01-05T10:02:00Z'),
        parseDeal({ id: '1', type: 'DEAL_TYPE_BALANCE', time: '2026-01-05T09:00:00Z', profit: 1000 }),
        row('9', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_OUT', 0.1, '2026-01-05T10:01:00Z'),
        row('10', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_IN', 0.3, '2026-01-05T10:00:00Z'),
        row('9', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_OUT', 0.1, '2026-01-05T10:01:00Z'),
        row('13', 'DEAL_TYPE_BUY_CANCELED', 'DEAL_ENTRY_IN', 0.1, '2026-01-05T10:03:00Z'),
      ];
      const deals = toDeals(rows);
      expect(brief(deals)).toEqual([
        ['10', 'in', 'buy', '0.3'],
        ['9', 'out', 'sell', '0.1'],
        ['12', 'out', 'sell', '0.1'],
      ]);
      expect(deals[0]).toMatchObject({
        orderId: 'o10',
        positionId: '50',
        symbol: 'EURUSD',
        tag: 'tagA',
        time: '2026-01-05T10:00:00.000Z',
      });
      expect(deals[0]!.price?.toString()).toBe('1.08');
    });

    it("keeps the broker's profit, swap and commission; a reversal's money stays on its closing part", () => {
      const rows = [
        row('10', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_IN', 0.3, '2026-01-05T10:00:00Z', { commission: -1.05 }),
        row('11', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_INOUT', 0.5, '2026-01-05T10:02:00Z', {
          profit: 12.5,
          swap: -0.4,
          commission: -1.75,
        }),
      ];
      const money = toDeals(rows).map((d) => [
        d.id,
        d.profit?.toString(),
        d.swap?.toString(),
        d.commission?.toString(),
      ]);
      expect(money).toEqual([
        ['10', '0', undefined, '-1.05'],
        ['11', '12.5', '-0.4', '-1.75'],
        ['11:in', '0', undefined, undefined],
      ]);
    });

    it('orders deals of the same millisecond by ticket, numerically', () => {
      const t = '2026-01-05T10:00:00Z';
      const rows = [
        row('100', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_OUT', 0.1, t),
        row('99', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_IN', 0.1, t),
      ];
      expect(toDeals(rows).map((d) => d.id)).toEqual(['99', '100']);
    });

    it('splits a netting reversal (INOUT) into an out of what the position held and an in of the rest', () => {
      const rows = [
        row('10', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_IN', 0.3, '2026-01-05T10:00:00Z'),
        row('11', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_OUT', 0.1, '2026-01-05T10:01:00Z'),
        row('12', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_INOUT', 0.5, '2026-01-05T10:02:00Z'),
        row('13', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_INOUT', 0.4, '2026-01-05T10:03:00Z'),
      ];
      const deals = toDeals(rows);
      expect(brief(deals)).toEqual([
        ['10', 'in', 'buy', '0.3'],
        ['11', 'out', 'sell', '0.1'],
        ['12', 'out', 'sell', '0.2'],
        ['12:in', 'in', 'sell', '0.3'],
        ['13', 'out', 'buy', '0.3'],
        ['13:in', 'in', 'buy', '0.1'],
      ]);
      expect(deals[3]).toMatchObject({ orderId: 'o12', positionId: '50', time: '2026-01-05T10:02:00.000Z' });
    });

    it('reads a reversed position volume from deals before the window, without returning them', () => {
      const earlier = [row('10', 'DEAL_TYPE_BUY', 'DEAL_ENTRY_IN', 0.3, '2026-01-04T10:00:00Z')];
      const rows = [row('12', 'DEAL_TYPE_SELL', 'DEAL_ENTRY_INOUT', 0.5, '2026-01-05T10:02:00Z')];
      expect(brief(toDeals(rows, earlier))).toEqual([
        ['12', 'out', 'sell', '0.3'],
        ['12:in', 'in', 'sell', '0.2'],
      ]);
      // Without the opening, the held volume is unknown: the reversal stays whole, as a close.
      expect(brief(toDeals(rows))).toEqual([['12', 'out', 'sell', '0.5']]);
    });
  });
});
