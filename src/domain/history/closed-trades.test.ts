import { describe, expect, it } from 'vitest';
import { dec } from '../decimal.js';
import type { Deal, InstrumentSpec } from '../types.js';
import { closedTrades } from './closed-trades.js';

const spec = (contractSize: string): InstrumentSpec => ({
  symbol: 'X',
  volumeStep: dec('0.01'),
  minVolume: dec('0.01'),
  maxVolume: dec(100),
  contractSize: dec(contractSize),
  tickSize: dec('0.00001'),
});
const specs: Record<string, InstrumentSpec> = { EURUSD: spec('100000'), XAUUSD: spec('100') };
const specOf = (s: string) => specs[s] ?? null;

let n = 0;
function deal(o: Partial<Deal> & Pick<Deal, 'positionId' | 'entry' | 'side' | 'volume' | 'price'>): Deal {
  n++;
  return {
    id: `d${n}`,
    orderId: null,
    symbol: 'EURUSD',
    time: `2026-01-05T10:${String(n).padStart(2, '0')}:00.000Z`,
    tag: null,
    ...o,
  };
}
const v = (s: string) => dec(s);

describe('closed trades from deals', () => {
  it("takes the broker's profit, swap and commission when every closing deal carries them", () => {
    const trades = closedTrades(
      [
        deal({
          positionId: '1',
          entry: 'in',
          side: 'buy',
          volume: v('0.3'),
          price: v('1.1000'),
          commission: v('-1.5'),
          tag: 't1',
        }),
        deal({
          positionId: '1',
          entry: 'out',
          side: 'sell',
          volume: v('0.1'),
          price: v('1.1010'),
          profit: v('10'),
          swap: v('-0.2'),
          commission: v('-0.5'),
        }),
        deal({
          positionId: '1',
          entry: 'out',
          side: 'sell',
          volume: v('0.2'),
          price: v('1.1025'),
          profit: v('50'),
          swap: v('-0.4'),
          commission: v('-1'),
        }),
      ],
      specOf,
    );
    expect(trades).toHaveLength(1);
    const t = trades[0]!;
    expect([t.id, t.side, t.volume.toString(), t.openPrice?.toString(), t.closePrice?.toString()]).toEqual([
      '1',
      'buy',
      '0.3',
      '1.1',
      '1.102',
    ]);
    expect([
      t.profit?.toString(),
      t.profitSource,
      t.swap?.toString(),
      t.commission?.toString(),
      t.netProfit?.toString(),
    ]).toEqual(['60', 'broker', '-0.6', '-3', '56.4']);
    expect([t.fullyClosed, t.tag, t.openTime !== null]).toEqual([true, 't1', true]);
  });

  it('computes profit from prices x volume x contract size when the broker gives none, signed by the side', () => {
    const trades = closedTrades(
      [
        deal({ positionId: '7', entry: 'in', side: 'sell', volume: v('0.1'), price: v('2000'), symbol: 'XAUUSD' }),
        deal({ positionId: '7', entry: 'in', side: 'sell', volume: v('0.3'), price: v('2004'), symbol: 'XAUUSD' }),
        deal({ positionId: '7', entry: 'out', side: 'buy', volume: v('0.4'), price: v('1990.5'), symbol: 'XAUUSD' }),
      ],
      specOf,
    );
    // open VWAP (200 + 601.2) / 0.4 = 2003; (2003 - 1990.5) x 0.4 x 100 = 500 for a sell.
    expect([trades[0]!.openPrice?.toString(), trades[0]!.profit?.toString(), trades[0]!.profitSource]).toEqual([
      '2003',
      '500',
      'computed',
    ]);
    expect([trades[0]!.swap, trades[0]!.commission]).toEqual([null, null]);
  });

  it('is unavailable when the opening deals were not read and the broker gives no profit', () => {
    const [t] = closedTrades(
      [deal({ positionId: '9', entry: 'out', side: 'sell', volume: v('1'), price: v('1.2') })],
      specOf,
    );
    expect([t!.side, t!.openPrice, t!.profit, t!.profitSource, t!.fullyClosed]).toEqual([
      'buy',
      null,
      null,
      'unavailable',
      false,
    ]);
  });

  it('splits a reused position id into trades, keeps a partial close of a still open position, skips open ones', () => {
    const trades = closedTrades(
      [
        deal({ positionId: 'N', entry: 'in', side: 'buy', volume: v('1'), price: v('1.1000') }),
        deal({ positionId: 'N', entry: 'out', side: 'sell', volume: v('1'), price: v('1.1001') }),
        deal({ positionId: 'N', entry: 'in', side: 'sell', volume: v('2'), price: v('1.1002') }),
        deal({ positionId: 'N', entry: 'out', side: 'buy', volume: v('0.5'), price: v('1.1000') }),
        deal({ positionId: 'O', entry: 'in', side: 'buy', volume: v('1'), price: v('1.1') }),
      ],
      specOf,
    );
    expect(trades.map((t) => [t.id, t.side, t.volume.toString(), t.profit?.toString(), t.fullyClosed])).toEqual([
      ['N', 'buy', '1', '10', true],
      ['N:2', 'sell', '0.5', '10', false],
    ]);
  });
});
