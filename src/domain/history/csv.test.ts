import { describe, expect, it } from 'vitest';
import { dec } from '../decimal.js';
import { tradesCsv } from './csv.js';
import type { FollowedTrade } from './follower.js';

describe('closed trades as CSV', () => {
  it('writes a header and one row per trade, quoting and defusing broker text', () => {
    const t: FollowedTrade = {
      id: 'p1',
      positionId: 'p1',
      symbol: '=EUR,USD',
      side: 'buy',
      volume: dec('0.5'),
      openPrice: dec('1.1'),
      closePrice: dec('1.1012'),
      openTime: '2026-01-05T10:00:00.000Z',
      closeTime: '2026-01-05T11:00:00.000Z',
      profit: dec('60'),
      profitSource: 'computed',
      swap: null,
      commission: dec('-1.5'),
      netProfit: dec('58.5'),
      fullyClosed: true,
      tag: null,
      master: {
        accountId: 'acc_m',
        positionId: 'm1',
        tradeId: 'm1',
        volume: dec(1),
        profit: dec(120),
        ratio: dec('0.5'),
        scaledProfit: dec(60),
      },
    };
    const lines = tradesCsv([t]).split('\r\n');
    expect(lines[0]).toBe(
      'close_time,open_time,position_id,symbol,side,volume,open_price,close_price,profit,swap,commission,net_profit,profit_source,fully_closed,master_account_id,master_position_id,master_profit,master_scaled_profit',
    );
    expect(lines[1]).toBe(
      `2026-01-05T11:00:00.000Z,2026-01-05T10:00:00.000Z,p1,"'=EUR,USD",buy,0.5,1.1,1.1012,60,,-1.5,58.5,computed,true,acc_m,m1,120,60`,
    );
    expect(lines).toHaveLength(3);
    expect(tradesCsv([])).toBe(`${lines[0]}\r\n`);
  });
});
