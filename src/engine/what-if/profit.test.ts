import { describe, expect, it } from 'vitest';
import { Decimal } from '../../domain/decimal.js';
import type { ReplayTrade } from '../../domain/revisions/replay-types.js';
import { copyProfit, MasterExits } from './profit.js';

let n = 0;
const trade = (action: string, volume: string, price: string, at: number): ReplayTrade => ({
  id: `t${++n}`,
  masterAccountId: 'm',
  action,
  symbol: 'EURUSD',
  side: 'buy',
  orderType: 'market',
  volume: new Decimal(volume),
  price: null,
  stopLoss: null,
  takeProfit: null,
  fillPrice: new Decimal(price),
  masterPositionId: 'p',
  actionAt: new Date(at),
  createdAt: new Date(at),
});

describe('MasterExits and copyProfit', () => {
  it("follow the Master's reductions as shares of what remained, then its close", () => {
    const open = trade('open', '1', '1.1000', 1);
    const reduce = trade('reduce', '0.25', '1.1010', 2);
    const close = trade('close', '0.75', '1.1020', 3);
    const exits = new MasterExits([close, open, reduce]).after(open)!;
    expect(exits.map((e) => [e.fraction.toString(), e.price.toString()])).toEqual([
      ['0.25', '1.101'],
      ['1', '1.102'],
    ]);
    // 0.5 lots: 0.125 at +10 points, 0.375 at +20 points, 100,000 units a lot, USD account.
    const p = copyProfit(
      'buy',
      new Decimal('0.5'),
      new Decimal('1.1'),
      exits,
      new Decimal(100_000),
      () => new Decimal(1),
    );
    expect(p.toString()).toBe('87.5');
    expect(
      copyProfit(
        'sell',
        new Decimal('0.5'),
        new Decimal('1.1'),
        exits,
        new Decimal(100_000),
        () => new Decimal(1),
      ).toString(),
    ).toBe('-87.5');
  });

  it('say nothing of a position still open', () => {
    const open = trade('open', '1', '1.1', 10);
    expect(new MasterExits([open, trade('reduce', '0.5', '1.2', 11)]).after(open)).toBeNull();
  });
});
