import { describe, expect, it } from 'vitest';
import { dec } from '../decimal.js';
import type { CopyIntent, PositionLink } from '../ledger-types.js';
import type { ClosedTrade } from './closed-trades.js';
import { copyQuality, pairWithMasters, trackingSummary } from './follower.js';

function trade(
  positionId: string,
  volume: string,
  profit: string,
  closeTime = '2026-01-05T12:00:00.000Z',
): ClosedTrade {
  return {
    id: positionId,
    positionId,
    symbol: 'EURUSD',
    side: 'buy',
    volume: dec(volume),
    openPrice: dec('1.1'),
    closePrice: dec('1.101'),
    openTime: '2026-01-05T10:00:00.000Z',
    closeTime,
    profit: dec(profit),
    profitSource: 'broker',
    swap: null,
    commission: null,
    netProfit: dec(profit),
    fullyClosed: true,
    tag: null,
  };
}
const link = (slavePositionId: string, masterPositionId: string): PositionLink => ({
  id: `l${slavePositionId}`,
  kind: 'position',
  masterAccountId: 'M',
  masterPositionId,
  slaveAccountId: 'S',
  slavePositionId,
  intentId: null,
  volume: null,
  open: false,
  closedReason: 'master_closed',
  createdAt: new Date(0),
  closedAt: null,
});

describe('a follower against its Master', () => {
  it("puts the Master's profit, scaled by the volume ratio, beside each copied trade", () => {
    const slave = [trade('s1', '0.5', '48.5'), trade('s2', '0.2', '-21'), trade('s3', '1', '5')];
    const master = new Map([['M', [trade('m1', '1', '100'), trade('m2', '0.1', '-10')]]]);
    const out = pairWithMasters(slave, [link('s1', 'm1'), link('s2', 'm2'), link('s4', 'm9')], master);
    expect(out.map((t) => [t.id, t.master?.ratio?.toString(), t.master?.scaledProfit?.toString()])).toEqual([
      ['s1', '0.5', '50'],
      ['s2', '2', '-20'],
      ['s3', undefined, undefined],
    ]);
    expect(out[2]!.master).toBeNull();
    const sum = trackingSummary(out);
    expect([
      sum.pairedTrades,
      sum.copyProfit.toString(),
      sum.masterScaledProfit.toString(),
      sum.difference.toString(),
    ]).toEqual([2, '27.5', '30', '-2.5']);
  });

  it('a copy whose Master trade is not closed yet names the Master position and no profit', () => {
    const [t] = pairWithMasters([trade('s1', '0.5', '1')], [link('s1', 'm1')], new Map());
    expect(t!.master).toEqual({
      accountId: 'M',
      positionId: 'm1',
      tradeId: null,
      volume: null,
      profit: null,
      ratio: null,
      scaledProfit: null,
    });
  });

  it('copy success ratio and mean slippage from the ledger', () => {
    const intent = (state: string, symbol = 'EURUSD', slippage: string | null = null) =>
      ({ state, symbol, slippage: slippage === null ? null : dec(slippage) }) as CopyIntent;
    const q = copyQuality([
      intent('confirmed', 'EURUSD', '0.0001'),
      intent('confirmed', 'EURUSD', '-0.0003'),
      intent('confirmed', 'XAUUSD', '0.5'),
      intent('rejected'),
      intent('unresolved'),
      intent('skipped'),
      intent('denied'),
    ]);
    expect([q.intents, q.attempted, q.confirmed, q.rejected, q.unresolved, q.skipped, q.denied]).toEqual([
      7, 5, 3, 1, 1, 1, 1,
    ]);
    expect([q.successRatio?.toString(), q.meanSlippage?.toString()]).toEqual(['0.6', '0.1666']);
    expect(q.bySymbol.map((s) => [s.symbol, s.confirmed, s.meanSlippage?.toString()])).toEqual([
      ['EURUSD', 2, '-0.0001'],
      ['XAUUSD', 1, '0.5'],
    ]);
    expect(copyQuality([intent('skipped')]).successRatio).toBeNull();
  });
});
