import { describe, expect, it } from 'vitest';
import { settleChains } from './settle-chains.js';

const row = (n: string, trade: string, pos: string | null, ord: string | null = null) => ({
  n,
  trade: { id: trade, masterPositionId: pos, masterOrderId: ord },
});

describe('settleChains', () => {
  it('hedging: one chain per Master position, each in the order given', () => {
    const list = [
      row('open1', 't1', 'P1'),
      row('open2', 't2', 'P2'),
      row('close1', 't3', 'P1'),
      row('mod2', 't4', 'P2'),
    ];
    expect(settleChains(list, true).map((c) => c.map((r) => r.n))).toEqual([
      ['open1', 'close1'],
      ['open2', 'mod2'],
    ]);
  });

  it("hedging: a pending order's placement, its fill and the position's later close form one chain", () => {
    const list = [
      row('placed', 't1', null, 'O1'),
      row('other', 't2', 'P9'),
      row('filled', 't3', 'P1', 'O1'),
      row('closed', 't4', 'P1'),
    ];
    expect(settleChains(list, true).map((c) => c.map((r) => r.n))).toEqual([['placed', 'filled', 'closed'], ['other']]);
  });

  it('hedging: rows of one trade stay together even without ids', () => {
    const list = [row('a', 't1', null), row('b', 't2', null), row('c', 't1', null)];
    expect(settleChains(list, true).map((c) => c.map((r) => r.n))).toEqual([['a', 'c'], ['b']]);
  });

  it('netting: a single chain in the order given', () => {
    const list = [row('a', 't1', 'P1'), row('b', 't2', 'P2')];
    expect(settleChains(list, false)).toEqual([list]);
    expect(settleChains([], true)).toEqual([]);
  });
});
