import { describe, expect, it } from 'vitest';
import { dec } from '../decimal.js';
import type { ClosedTrade } from './closed-trades.js';
import { closedIn, realizedCurve, statsBySymbol, tradeStats } from './stats.js';

let n = 0;
function trade(symbol: string, net: string | null, extra: Partial<ClosedTrade> = {}): ClosedTrade {
  n++;
  return {
    id: `p${n}`,
    positionId: `p${n}`,
    symbol,
    side: 'buy',
    volume: dec('0.1'),
    openPrice: dec(1),
    closePrice: dec(1),
    openTime: null,
    closeTime: `2026-01-0${n}T12:00:00.000Z`,
    profit: net === null ? null : dec(net),
    profitSource: net === null ? 'unavailable' : 'broker',
    swap: null,
    commission: null,
    netProfit: net === null ? null : dec(net),
    fullyClosed: true,
    tag: null,
    ...extra,
  };
}

describe('trade statistics', () => {
  n = 0;
  // Curve: 100, 40, 70, -30, 20: the peak 100 falls to -30, a drawdown of 130.
  const trades = [
    trade('EURUSD', '100'),
    trade('XAUUSD', '-60'),
    trade('EURUSD', '30'),
    trade('XAUUSD', '-100', { swap: dec('-2'), commission: dec('-3') }),
    trade('EURUSD', '50'),
    trade('EURUSD', null),
  ];

  it('net, gross, win rate, profit factor, max drawdown', () => {
    const s = tradeStats(trades);
    expect({
      trades: s.trades,
      priced: s.pricedTrades,
      wins: s.wins,
      losses: s.losses,
      winRate: s.winRate?.toString(),
      grossProfit: s.grossProfit.toString(),
      grossLoss: s.grossLoss.toString(),
      net: s.netProfit.toString(),
      pf: s.profitFactor?.toString(),
      dd: s.maxDrawdown.toString(),
      swap: s.swap.toString(),
      commission: s.commission.toString(),
      volume: s.volume.toString(),
      sources: s.profitSources,
    }).toEqual({
      trades: 6,
      priced: 5,
      wins: 3,
      losses: 2,
      winRate: '0.6',
      grossProfit: '180',
      grossLoss: '-160',
      net: '20',
      pf: '1.125',
      dd: '130',
      swap: '-2',
      commission: '-3',
      volume: '0.6',
      sources: { broker: 5, computed: 0, unavailable: 1 },
    });
  });

  it('per symbol, a profit factor without losses is null, and no trade has no win rate', () => {
    const by = statsBySymbol(trades);
    expect(
      by.map((s) => [s.symbol, s.trades, s.netProfit.toString(), s.profitFactor, s.maxDrawdown.toString()]),
    ).toEqual([
      ['EURUSD', 4, '180', null, '0'],
      ['XAUUSD', 2, '-160', dec('0'), '160'],
    ]);
    expect(tradeStats([]).winRate).toBeNull();
  });

  it('the cumulative curve and the period filter', () => {
    expect(realizedCurve(trades).map((p) => p.cumulative.toString())).toEqual(['100', '40', '70', '-30', '20']);
    const inJan2to4 = closedIn(trades, new Date('2026-01-02T00:00:00Z'), new Date('2026-01-04T12:00:00Z'));
    expect(inJan2to4.map((t) => t.netProfit?.toString())).toEqual(['-60', '30']);
  });
});
