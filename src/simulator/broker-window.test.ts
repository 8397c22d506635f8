import { afterEach, describe, expect, it, vi } from 'vitest';
import { dec } from '../domain/decimal.js';
import type { Order } from '../domain/types.js';
import { SimBroker } from './broker.js';
import { SeededRandom } from './market.js';

/**
 * The front ends ask for the last seconds of history after every write (TradeLocker's ordersHistory, cTrader's
 * order and deal lists, MetaApi's history): answering from the newest end must give exactly what filtering the
 * whole history gave, and must not read the whole history to do it.
 */

/** mulberry32, the simulator's own: a failing case replays from its seed. */
const random = (seed: number): (() => number) => {
  const r = new SeededRandom(seed);
  return () => r.next();
};

const T0 = Date.parse('2026-11-23T10:00:00.000Z');

/**
 * One account traded at a clock that mostly moves forward and sometimes jumps back: market trades, partial and
 * full closes, pending orders cancelled or triggered later (finished long after they were created).
 */
function traded(seed: number, steps: number, backwards: boolean) {
  const rnd = random(seed);
  let t = T0;
  const broker = new SimBroker({ seed, now: () => new Date(t) });
  broker.setPrice('EURUSD', '1.10000');
  const id = broker.createAccount({ balance: 10_000_000 }).id;
  const tags = ['a', 'b', 'c', 'd', ''];
  const tag = () => tags[Math.floor(rnd() * tags.length)]!;
  for (let i = 0; i < steps; i++) {
    t += backwards && rnd() < 0.15 ? -Math.floor(rnd() * 20_000) : Math.floor(rnd() * 3_000);
    const r = rnd();
    const open = broker.positions(id);
    const pending = broker.orders(id);
    if (r < 0.35 || open.length === 0) {
      const side = rnd() < 0.5 ? 'buy' : 'sell';
      broker.placeOrder(id, { symbol: 'EURUSD', side, type: 'market', volume: dec('0.1'), tag: tag() });
    } else if (r < 0.6) {
      const p = open[Math.floor(rnd() * open.length)]!;
      broker.closePosition(id, p.id, rnd() < 0.3 && p.volume.gt('0.05') ? dec('0.05') : undefined);
    } else if (r < 0.75) {
      broker.placeOrder(id, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'limit',
        price: dec('1.09000'),
        volume: dec('0.1'),
        tag: tag(),
      });
    } else if (r < 0.85 && pending.length > 0) {
      broker.cancelOrder(id, pending[0]!.id);
    } else if (r < 0.9) {
      // Fills every resting buy limit: orders created earlier finish now.
      broker.setPrice('EURUSD', '1.08500');
      broker.setPrice('EURUSD', '1.10000');
    } else if (open.length > 0) {
      // Close by an opposite order naming the position: the closing order gets its tag after it is made.
      const p = open[0]!;
      broker.placeOrder(id, {
        symbol: 'EURUSD',
        side: p.side === 'buy' ? 'sell' : 'buy',
        type: 'market',
        volume: p.volume,
        positionId: p.id,
        tag: tag(),
      });
    }
  }
  return { broker, id, now: () => t };
}

/** The filter the broker applied to every row before (inclusive at both ends). */
function inWindow(iso: string, from?: Date, to?: Date): boolean {
  const t = Date.parse(iso);
  return (!from || t >= from.getTime()) && (!to || t <= to.getTime());
}

describe('SimBroker history windows', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers as filtering the whole history does, on random trading with a clock that jumps back', () => {
    for (const [seed, backwards] of [
      [1, false],
      [2, true],
      [3, true],
      [4, false],
    ] as const) {
      const { broker, id, now } = traded(seed, 400, backwards);
      const rnd = random(seed * 7);
      // Without a window every row is read: the reference.
      const allOrders = broker.orders(id, { includeHistory: true });
      const allDeals = broker.deals(id);
      expect(allDeals.length).toBeGreaterThan(200);
      const span = now() - T0 + 60_000;
      for (let k = 0; k < 60; k++) {
        const from = new Date(T0 - 30_000 + Math.floor(rnd() * span));
        const to = rnd() < 0.5 ? undefined : new Date(from.getTime() + Math.floor(rnd() * 60_000));
        const symbol = rnd() < 0.2 ? (rnd() < 0.5 ? 'EURUSD' : 'GBPUSD') : undefined;
        const q = { from, ...(to ? { to } : {}), ...(symbol ? { symbol } : {}) };
        expect(broker.orders(id, { includeHistory: true, ...q })).toEqual(
          allOrders.filter((o) => (!symbol || o.symbol === symbol) && inWindow(o.createdAt, from, to)),
        );
        expect(broker.orders(id, q)).toEqual(
          allOrders.filter(
            (o) => o.status === 'pending' && (!symbol || o.symbol === symbol) && inWindow(o.createdAt, from, to),
          ),
        );
        expect(broker.deals(id, { from, ...(to ? { to } : {}) })).toEqual(
          allDeals.filter((d) => inWindow(d.time, from, to)),
        );
      }
      // An end alone still reads everything before it.
      const to = new Date(T0 + span / 2);
      expect(broker.deals(id, { to })).toEqual(allDeals.filter((d) => inWindow(d.time, undefined, to)));
    }
  });

  it('finds the newest order under a tag, as a scan of the history from its end did', () => {
    const { broker, id } = traded(5, 300, true);
    const history = broker.journalRecord(id, { history: 0, deals: 0 }).record['history'] as Order[];
    const pending = broker.orders(id);
    for (const tag of ['a', 'b', 'c', 'd', '', 'never']) {
      const want = pending.find((o) => o.tag === tag)?.id ?? [...history].reverse().find((o) => o.tag === tag)?.id;
      expect(broker.findByTag(id, tag).order?.id).toBe(want);
    }
    // A trim forgets what it dropped and still finds what it kept.
    broker.trimHistory(20);
    const kept = broker.journalRecord(id, { history: 0, deals: 0 }).record['history'] as Order[];
    for (const tag of ['a', 'b', '']) {
      const want = pending.find((o) => o.tag === tag)?.id ?? [...kept].reverse().find((o) => o.tag === tag)?.id;
      expect(broker.findByTag(id, tag).order?.id).toBe(want);
    }
  });

  it('a window of the last seconds reads only its own rows, not the whole history', () => {
    const { broker, id, now } = traded(6, 600, false);
    const from = new Date(now() - 5_000);
    const want = {
      orders: broker.orders(id, { includeHistory: true, from }),
      deals: broker.deals(id, { from }),
    };
    const total = broker.orders(id, { includeHistory: true }).length + broker.deals(id).length;
    expect(total).toBeGreaterThan(600);
    const pending = broker.orders(id).length;
    // Every row the window filter looks at is parsed once (pending orders are all looked at): count the parses.
    const parse = vi.spyOn(Date, 'parse');
    expect(broker.orders(id, { includeHistory: true, from })).toEqual(want.orders);
    expect(broker.deals(id, { from })).toEqual(want.deals);
    expect(parse.mock.calls.length).toBeLessThan(pending + want.orders.length + want.deals.length + 20);
  });
});
