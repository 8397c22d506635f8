import { describe, expect, it, vi } from 'vitest';
import { dec } from '../domain/decimal.js';
import { SimBroker, SimError } from './broker.js';
import type { SimEvent, SimOrderRequest } from './contract.js';

function setup(init: { balance?: number; hedging?: boolean; leverage?: number } = {}, now?: () => Date) {
  const broker = new SimBroker({ seed: 1, ...(now ? { now } : {}) });
  const acc = broker.createAccount({
    balance: init.balance ?? 10_000,
    hedging: init.hedging ?? true,
    leverage: init.leverage ?? 100,
  });
  const events: SimEvent[] = [];
  broker.onEvent((id, ev) => id === acc.id && events.push(ev));
  const kinds = () => events.map((e) => e.kind);
  return { broker, id: acc.id, events, kinds };
}

const buy = (volume: string, extra: Partial<SimOrderRequest> = {}): SimOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec(volume),
  tag: 't1',
  ...extra,
});
const sell = (volume: string, extra: Partial<SimOrderRequest> = {}): SimOrderRequest =>
  buy(volume, { side: 'sell', ...extra });

function simCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof SimError) return err.code;
    throw err;
  }
  return 'no error';
}

describe('SimBroker market orders', () => {
  it('opens a buy at the ask with the tag, a 64-bit id and a position_opened event', () => {
    const { broker, id, kinds } = setup();
    const r = broker.placeOrder(
      id,
      buy('0.10', { tag: 'cp-abc', stopLoss: dec('1.07000'), takeProfit: dec('1.09000') }),
    );
    expect(r.position?.openPrice.toString()).toBe('1.08003');
    expect(r.position?.tag).toBe('cp-abc');
    expect(BigInt(r.position!.id) > 2n ** 53n).toBe(true);
    expect(r.order.status).toBe('filled');
    expect(r.deal).toMatchObject({ entry: 'in', positionId: r.position!.id });
    expect(broker.positions(id)).toHaveLength(1);
    expect(broker.positions(id)[0]?.stopLoss?.toString()).toBe('1.07');
    expect(kinds()).toEqual(['position_opened']);
  });

  it('opens a sell at the bid; hedging keeps both positions', () => {
    const { broker, id } = setup();
    broker.placeOrder(id, buy('0.10'));
    const r = broker.placeOrder(id, sell('0.20'));
    expect(r.position?.openPrice.toString()).toBe('1.07997');
    expect(
      broker
        .positions(id)
        .map((p) => p.side)
        .sort(),
    ).toEqual(['buy', 'sell']);
  });

  it('partially closes keeping the id, realising profit into the balance', () => {
    const { broker, id, events } = setup();
    const pos = broker.placeOrder(id, buy('0.30')).position!;
    broker.setPrice('EURUSD', '1.08103'); // bid 1.08100: +0.00097 per unit
    const r = broker.closePosition(id, pos.id, dec('0.10'));
    expect(r.position?.id).toBe(pos.id);
    expect(r.position?.volume.toString()).toBe('0.2');
    expect(r.deal?.profit.toString()).toBe('9.7');
    expect(r.deal?.entry).toBe('out');
    expect(broker.state(id).balance.toString()).toBe('10009.7');
    const last = events.at(-1)!;
    expect(last.kind).toBe('position_reduced');
    expect(last.closedVolume?.toString()).toBe('0.1');
  });

  it('fully closes a sell with its loss and emits position_closed', () => {
    const { broker, id, kinds } = setup();
    const pos = broker.placeOrder(id, sell('1')).position!;
    broker.setPrice('EURUSD', '1.08097'); // ask 1.08100: -0.00103 per unit
    const r = broker.closePosition(id, pos.id);
    expect(r.position).toBeNull();
    expect(r.deal?.profit.toString()).toBe('-103');
    expect(broker.positions(id)).toEqual([]);
    expect(broker.state(id).balance.toString()).toBe('9897');
    expect(kinds()).toEqual(['position_opened', 'position_closed']);
  });

  it('refuses a close volume that leaves less than the minimum', () => {
    const { broker, id } = setup();
    const pos = broker.placeOrder(id, buy('0.10')).position!;
    expect(simCode(() => broker.closePosition(id, pos.id, dec('0.095')))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.closePosition(id, pos.id, dec('0.2')))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.closePosition(id, '1', dec('0.1')))).toBe('POSITION_NOT_FOUND');
  });

  it('fills only part of the volume when asked, rounded down to the step', () => {
    const { broker, id } = setup();
    const r = broker.placeOrder(id, buy('0.25'), { partialRatio: 0.5 });
    expect(r.order.filledVolume.toString()).toBe('0.12');
    expect(r.order.volume.toString()).toBe('0.25');
    expect(r.position?.volume.toString()).toBe('0.12');
  });
});

describe('SimBroker pending orders', () => {
  it('triggers a buy limit when the ask crosses down, keeping the tag', () => {
    const { broker, id, kinds } = setup();
    const r = broker.placeOrder(id, buy('0.10', { type: 'limit', price: dec('1.07500'), tag: 'lim' }));
    expect(r.order.status).toBe('pending');
    broker.setPrice('EURUSD', '1.07600');
    expect(broker.positions(id)).toEqual([]);
    broker.setPrice('EURUSD', '1.07490'); // ask 1.07493
    const [p] = broker.positions(id);
    expect(p).toMatchObject({ side: 'buy', tag: 'lim' });
    expect(p?.openPrice.toString()).toBe('1.07493');
    const [o] = broker.orders(id, { includeHistory: true });
    expect(o).toMatchObject({ status: 'filled', positionId: p!.id });
    expect(broker.orders(id)).toEqual([]);
    expect(kinds()).toEqual(['order_placed', 'position_opened', 'order_filled']);
  });

  it('triggers a sell stop when the bid falls through it', () => {
    const { broker, id } = setup();
    broker.placeOrder(id, sell('0.10', { type: 'stop', price: dec('1.07000') }));
    broker.setPrice('EURUSD', '1.07010');
    expect(broker.positions(id)).toHaveLength(0);
    broker.setPrice('EURUSD', '1.06950');
    expect(broker.positions(id)[0]?.side).toBe('sell');
  });

  it('refuses a pending price on the wrong side of the market', () => {
    const { broker, id } = setup();
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { type: 'limit', price: dec('1.09') })))).toBe(
      'INVALID_PRICE',
    );
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { type: 'stop', price: dec('1.07') })))).toBe(
      'INVALID_PRICE',
    );
    expect(simCode(() => broker.placeOrder(id, sell('0.1', { type: 'limit', price: dec('1.07') })))).toBe(
      'INVALID_PRICE',
    );
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { type: 'limit', price: null })))).toBe('INVALID_PRICE');
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { type: 'limit', price: dec('1.070001') })))).toBe(
      'INVALID_PRICE',
    );
  });

  it('fills a marketable limit at once at the market price when asked to, as TradeLocker servers do', () => {
    const { broker, id, kinds } = setup();
    broker.setPrice('EURUSD', '1.08000');
    const { bid, ask } = broker.quote('EURUSD');
    const fill = { marketableLimit: 'fill' } as const;
    // A sell limit below the bid: the buyer pays the bid, which is better than the limit.
    const r = broker.placeOrder(id, sell('0.10', { type: 'limit', price: dec('1.07000'), tag: 'mk1' }), fill);
    expect(r.order).toMatchObject({ type: 'limit', status: 'filled', positionId: r.position!.id });
    expect(r.order.price?.toString()).toBe('1.07');
    expect(r.order.filledVolume.toString()).toBe('0.1');
    expect(r.position?.openPrice.toString()).toBe(bid.toString());
    expect(r.deal?.price.toString()).toBe(bid.toString());
    // At the market counts as marketable too; a buy limit above the ask fills at the ask.
    const atBid = broker.placeOrder(id, sell('0.10', { type: 'limit', price: bid, tag: 'mk2' }), fill);
    expect(atBid.order.status).toBe('filled');
    const up = broker.placeOrder(id, buy('0.10', { type: 'limit', price: dec('1.09000'), tag: 'mk3' }), fill);
    expect(up.position?.openPrice.toString()).toBe(ask.toString());
    // Never pending: like a market order it shows as positions only, and the history holds the filled limits.
    expect(kinds()).toEqual(['position_opened', 'position_opened', 'position_opened']);
    expect(broker.orders(id)).toEqual([]);
    expect(broker.orders(id, { includeHistory: true }).map((o) => [o.tag, o.type, o.status])).toEqual([
      ['mk1', 'limit', 'filled'],
      ['mk2', 'limit', 'filled'],
      ['mk3', 'limit', 'filled'],
    ]);
    // A limit that is not marketable still rests; stops and the tick grid are still checked.
    expect(broker.placeOrder(id, buy('0.10', { type: 'limit', price: dec('1.07000') }), fill).order.status).toBe(
      'pending',
    );
    expect(simCode(() => broker.placeOrder(id, sell('0.1', { type: 'limit', price: dec('1.070001') }), fill))).toBe(
      'INVALID_PRICE',
    );
    expect(
      simCode(() =>
        broker.placeOrder(id, sell('0.1', { type: 'limit', price: dec('1.07'), stopLoss: dec('1.07') }), fill),
      ),
    ).toBe('INVALID_STOPS');
    // Stop orders on the wrong side are refused either way.
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { type: 'stop', price: dec('1.07') }), fill))).toBe(
      'INVALID_PRICE',
    );
  });

  it('keeps refusing a marketable limit by default (MetaTrader and cTrader front ends)', () => {
    const { broker, id } = setup();
    broker.setPrice('EURUSD', '1.08000');
    expect(simCode(() => broker.placeOrder(id, sell('0.1', { type: 'limit', price: dec('1.07') })))).toBe(
      'INVALID_PRICE',
    );
    expect(broker.orders(id, { includeHistory: true })).toEqual([]);
  });

  it('refuses a marketable limit that free margin cannot carry, leaving nothing behind', () => {
    const { broker, id } = setup({ balance: 10 });
    broker.setPrice('EURUSD', '1.08000');
    expect(
      simCode(() =>
        broker.placeOrder(id, sell('1', { type: 'limit', price: dec('1.07') }), { marketableLimit: 'fill' }),
      ),
    ).toBe('NOT_ENOUGH_MONEY');
    expect(broker.orders(id, { includeHistory: true })).toEqual([]);
    expect(broker.positions(id)).toEqual([]);
  });

  it('modifies and cancels a pending order, keeping it in history', () => {
    const { broker, id, kinds } = setup();
    const o = broker.placeOrder(id, buy('0.10', { type: 'limit', price: dec('1.07500') })).order;
    const m = broker.modifyOrder(id, o.id, { price: dec('1.07000'), volume: dec('0.2'), stopLoss: dec('1.06000') });
    expect(m.price?.toString()).toBe('1.07');
    expect(m.volume.toString()).toBe('0.2');
    expect(simCode(() => broker.modifyOrder(id, o.id, { stopLoss: dec('1.08') }))).toBe('INVALID_STOPS');
    broker.cancelOrder(id, o.id);
    expect(broker.orders(id)).toEqual([]);
    expect(broker.orders(id, { includeHistory: true })[0]?.status).toBe('cancelled');
    expect(simCode(() => broker.cancelOrder(id, o.id))).toBe('ORDER_NOT_FOUND');
    expect(kinds()).toEqual(['order_placed', 'order_modified', 'order_cancelled']);
  });

  it('filters orders by creation time and symbol', () => {
    let t = Date.parse('2026-03-01T10:00:00Z');
    const { broker, id } = setup({}, () => new Date(t));
    broker.placeOrder(id, buy('0.1', { tag: 'a' }));
    t += 60_000;
    broker.placeOrder(id, { symbol: 'XAUUSD', side: 'buy', type: 'market', volume: dec('0.01'), tag: 'b' });
    t += 60_000;
    broker.placeOrder(id, buy('0.1', { tag: 'c' }));
    const tags = (q: Parameters<SimBroker['orders']>[1]) =>
      broker.orders(id, { includeHistory: true, ...q }).map((o) => o.tag);
    expect(tags({})).toEqual(['a', 'b', 'c']);
    expect(tags({ from: new Date('2026-03-01T10:00:30Z'), to: new Date('2026-03-01T10:01:30Z') })).toEqual(['b']);
    expect(tags({ symbol: 'EURUSD' })).toEqual(['a', 'c']);
    expect(broker.deals(id, { from: new Date('2026-03-01T10:01:30Z') }).map((d) => d.tag)).toEqual(['c']);
  });

  it('rejects a triggered order that no longer has the margin', () => {
    const { broker, id, kinds } = setup({ balance: 500 });
    broker.placeOrder(id, buy('0.4', { type: 'limit', price: dec('1.07500') }));
    broker.placeOrder(id, buy('0.1'));
    broker.setPrice('EURUSD', '1.07400');
    expect(broker.orders(id, { includeHistory: true }).map((o) => o.status)).toContain('rejected');
    expect(broker.positions(id)).toHaveLength(1);
    expect(kinds()).toEqual(['order_placed', 'position_opened', 'order_cancelled']);
  });
});

describe('SimBroker stop loss and take profit', () => {
  it('closes a buy at the bid when the stop loss is hit', () => {
    const { broker, id, kinds } = setup();
    broker.placeOrder(id, buy('1', { stopLoss: dec('1.07500') }));
    broker.setPrice('EURUSD', '1.07510'); // bid 1.07507
    expect(broker.positions(id)).toHaveLength(1);
    broker.setPrice('EURUSD', '1.07450'); // bid 1.07447
    expect(broker.positions(id)).toHaveLength(0);
    const out = broker.deals(id).at(-1)!;
    expect(out.price.toString()).toBe('1.07447');
    expect(out.profit.toString()).toBe('-556');
    expect(kinds()).toEqual(['position_opened', 'position_closed']);
  });

  it('closes a sell when the take profit is hit', () => {
    const { broker, id } = setup();
    broker.placeOrder(id, sell('0.1', { takeProfit: dec('1.07000') }));
    broker.setPrice('EURUSD', '1.06990'); // ask 1.06993
    expect(broker.positions(id)).toHaveLength(0);
    expect(broker.deals(id).at(-1)?.profit.toString()).toBe('100.4');
  });

  it('modifies SL/TP, refusing the wrong side, and emits only on change', () => {
    const { broker, id, kinds } = setup();
    const p = broker.placeOrder(id, buy('0.1')).position!;
    expect(simCode(() => broker.modifyPosition(id, p.id, { stopLoss: dec('1.09'), takeProfit: null }))).toBe(
      'INVALID_STOPS',
    );
    const m = broker.modifyPosition(id, p.id, { stopLoss: dec('1.07'), takeProfit: dec('1.09') });
    expect(m.takeProfit?.toString()).toBe('1.09');
    broker.modifyPosition(id, p.id, { stopLoss: dec('1.07'), takeProfit: dec('1.09') });
    expect(kinds()).toEqual(['position_opened', 'position_modified']);
  });
});

describe('SimBroker netting accounts', () => {
  it('nets same-side fills into one position at the average price', () => {
    const { broker, id, kinds } = setup({ hedging: false });
    const first = broker.placeOrder(id, buy('0.1', { tag: 'n1' })).position!;
    broker.setPrice('EURUSD', '1.08100'); // ask 1.08103
    const second = broker.placeOrder(id, buy('0.3', { tag: 'n2' })).position!;
    expect(second.id).toBe(first.id);
    expect(second.volume.toString()).toBe('0.4');
    expect(second.openPrice.toString()).toBe('1.08078');
    expect(second.tag).toBe('n1');
    expect(broker.findByTag(id, 'n2').order?.positionId).toBe(first.id);
    expect(kinds()).toEqual(['position_opened', 'position_modified']);
  });

  it('reduces, then reverses past zero into a new position', () => {
    const { broker, id, kinds } = setup({ hedging: false });
    const p = broker.placeOrder(id, buy('0.5')).position!;
    const reduced = broker.placeOrder(id, sell('0.2'));
    expect(reduced.position).toMatchObject({ id: p.id, side: 'buy' });
    expect(reduced.position?.volume.toString()).toBe('0.3');
    const flipped = broker.placeOrder(id, sell('0.5'));
    expect(flipped.position?.side).toBe('sell');
    expect(flipped.position?.volume.toString()).toBe('0.2');
    expect(flipped.position?.id).not.toBe(p.id);
    expect(broker.positions(id)).toHaveLength(1);
    expect(kinds()).toEqual(['position_opened', 'position_reduced', 'position_closed', 'position_opened']);
  });
});

describe('SimBroker validation and money', () => {
  it('validates volume, symbol and stops', () => {
    const { broker, id } = setup();
    expect(simCode(() => broker.placeOrder(id, buy('0.001')))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.placeOrder(id, buy('101')))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.placeOrder(id, buy('0.015')))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.placeOrder(id, { ...buy('0.3'), symbol: 'US500' }))).toBe('no error');
    expect(simCode(() => broker.placeOrder(id, { ...buy('0.15'), symbol: 'US500' }))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.placeOrder(id, { ...buy('0.05'), symbol: 'US500' }))).toBe('INVALID_VOLUME');
    expect(simCode(() => broker.placeOrder(id, { ...buy('0.1'), symbol: 'NOPE' }))).toBe('UNKNOWN_SYMBOL');
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { stopLoss: dec('1.08100') })))).toBe('INVALID_STOPS');
    expect(simCode(() => broker.placeOrder(id, buy('0.1', { takeProfit: dec('1.07900') })))).toBe('INVALID_STOPS');
    expect(simCode(() => broker.placeOrder(id, sell('0.1', { stopLoss: dec('1.07900') })))).toBe('INVALID_STOPS');
    expect(simCode(() => broker.placeOrder('nobody', buy('0.1')))).toBe('UNKNOWN_ACCOUNT');
    expect(broker.positions(id).map((p) => p.symbol)).toEqual(['US500']);
  });

  it('computes equity and margin, and refuses an order free margin cannot carry', () => {
    const { broker, id } = setup({ balance: 2000, leverage: 100 });
    broker.placeOrder(id, buy('1'));
    const st = broker.state(id);
    expect(st.margin.toString()).toBe('1080');
    expect(st.unrealizedPnl.toString()).toBe('-6');
    expect(st.equity.toString()).toBe('1994');
    expect(st.freeMargin.toString()).toBe('914');
    expect(simCode(() => broker.placeOrder(id, buy('1')))).toBe('NOT_ENOUGH_MONEY');
    expect(simCode(() => broker.placeOrder(id, buy('0.8')))).toBe('no error');
    expect(broker.positions(id)).toHaveLength(2);
  });

  it('lets a netting account reduce without margin even when free margin is gone', () => {
    const { broker, id } = setup({ balance: 1100, hedging: false });
    broker.placeOrder(id, buy('1'));
    broker.setPrice('EURUSD', '1.07950');
    expect(broker.state(id).freeMargin.lt(0)).toBe(true);
    expect(simCode(() => broker.placeOrder(id, sell('0.5')))).toBe('no error');
  });

  it('converts JPY-quoted profit into a USD account', () => {
    const { broker, id } = setup({ balance: 100_000 });
    const p = broker.placeOrder(id, { symbol: 'USDJPY', side: 'buy', type: 'market', volume: dec('1'), tag: 'j' })
      .position!;
    broker.setPrice('USDJPY', '151.004'); // bid 151.000; open at ask 150.004
    const r = broker.closePosition(id, p.id);
    expect(r.deal?.profit.toString()).toBe(dec('0.996').mul(100000).div('151.004').toDecimalPlaces(2).toString());
  });
});

describe('SimBroker lookups, events and snapshots', () => {
  it('finds by tag among positions, pending and past orders', () => {
    const { broker, id } = setup();
    const p = broker.placeOrder(id, buy('0.1', { tag: 'open' })).position!;
    broker.placeOrder(id, buy('0.1', { tag: 'pend', type: 'limit', price: dec('1.07') }));
    const gone = broker.placeOrder(id, buy('0.1', { tag: 'gone' })).position!;
    broker.closePosition(id, gone.id);
    expect(broker.findByTag(id, 'open').position?.id).toBe(p.id);
    expect(broker.findByTag(id, 'pend').order?.status).toBe('pending');
    expect(broker.findByTag(id, 'gone')).toEqual({ order: expect.objectContaining({ status: 'filled', tag: 'gone' }) });
    expect(broker.findByTag(id, 'never')).toEqual({});
  });

  it('stops delivering events after unsubscribe and only to the right account', () => {
    const broker = new SimBroker();
    const a = broker.createAccount({ balance: 1000 });
    const b = broker.createAccount({ balance: 1000 });
    const seen: string[] = [];
    const off = broker.onEvent((acc) => seen.push(acc));
    broker.placeOrder(a.id, buy('0.01'));
    broker.placeOrder(b.id, buy('0.01'));
    off();
    broker.placeOrder(a.id, buy('0.01'));
    expect(seen).toEqual([a.id, b.id]);
    expect(a.id).not.toBe(b.id);
  });

  it('round-trips through a JSON snapshot and keeps working', () => {
    const { broker, id } = setup({ hedging: false });
    const p = broker.placeOrder(id, buy('0.3', { tag: 'keep', stopLoss: dec('1.07') })).position!;
    broker.placeOrder(id, buy('0.1', { type: 'limit', price: dec('1.07500'), tag: 'later' }));
    broker.setPrice('EURUSD', '1.08200');
    broker.closePosition(id, p.id, dec('0.1'));
    const json = JSON.parse(JSON.stringify(broker.snapshot()));
    expect(JSON.stringify(json)).not.toMatch(/"d":|"e":/); // plain strings, not decimal.js internals

    const back = new SimBroker({ snapshot: json });
    expect(back.account(id)).toEqual(broker.account(id));
    expect(back.positions(id)).toEqual(broker.positions(id));
    expect(back.orders(id, { includeHistory: true })).toEqual(broker.orders(id, { includeHistory: true }));
    expect(back.deals(id)).toEqual(broker.deals(id));
    expect(back.quote('EURUSD')).toMatchObject({ bid: broker.quote('EURUSD').bid });

    back.setPrice('EURUSD', '1.07400'); // the restored limit triggers and nets into the restored position
    const [pos] = back.positions(id);
    expect(pos?.id).toBe(p.id);
    expect(pos?.volume.toString()).toBe('0.3');
    const fresh = back.placeOrder(id, sell('0.1')).order.id;
    expect(BigInt(fresh) > BigInt(broker.orders(id, { includeHistory: true }).at(-1)!.id)).toBe(true);
    expect(() => new SimBroker({ snapshot: { version: 99 } })).toThrow(/snapshot/);
  });

  it('moves prices on its own feed between start and stop', () => {
    // Fake interval timers: the feed's steps are counted, not hoped for within a wall-clock window.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const broker = new SimBroker({ seed: 5 });
      const before = broker.quote('EURUSD').bid.toString();
      broker.start(5);
      vi.advanceTimersByTime(60);
      broker.stop();
      const after = broker.quote('EURUSD').bid.toString();
      expect(after).not.toBe(before);
      vi.advanceTimersByTime(1000);
      expect(broker.quote('EURUSD').bid.toString()).toBe(after);
    } finally {
      vi.useRealTimers();
    }
  });
});
