import { describe, expect, it } from 'vitest';
import { dec } from '../domain/decimal.js';
import { SimBroker } from './broker.js';
import type { SimEvent } from './contract.js';
import { serverExecutionEvents } from './ctrader/server-events.js';
import { SimWire } from './ctrader/wire.js';

/**
 * A soak trades each account thousands of times; what a front end does per event or per request must not scan
 * the account's whole history (the simulator's share of the CPU grew from 22 % to 37 % over 30 minutes of a soak
 * when it did). Lookups by id go through an index that follows appends and is rebuilt after a trim.
 */
function traded(n: number) {
  const broker = new SimBroker({ seed: 3 });
  broker.setPrice('EURUSD', '1.10000');
  const acc = broker.createAccount({ balance: 1_000_000 });
  for (let i = 0; i < n; i++) {
    const r = broker.placeOrder(acc.id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: `t${i}`,
    });
    // Every third one closed in two parts: two closing deals on one position.
    if (i % 3 === 0) broker.closePosition(acc.id, r.position!.id, dec('0.04'));
    broker.closePosition(acc.id, r.position!.id);
  }
  return { broker, id: acc.id };
}

/** What the index answers, worked out by scanning, as the front ends did before. */
function byScan(broker: SimBroker, id: string) {
  const orders = broker.orders(id, { includeHistory: true });
  const deals = broker.deals(id);
  return {
    order: (orderId: string) => orders.find((o) => o.id === orderId),
    ofPosition: (positionId: string) => deals.filter((d) => d.positionId === positionId),
    ofOrder: (orderId: string) => deals.filter((d) => d.orderId === orderId),
  };
}

describe('SimBroker history index', () => {
  it('answers as a scan does, while trading goes on, after a trim and after a snapshot round trip', () => {
    const { broker, id } = traded(30);
    const check = (b: SimBroker) => {
      const scan = byScan(b, id);
      for (const d of b.deals(id)) {
        expect(b.dealsOf(id, { positionId: d.positionId })).toEqual(scan.ofPosition(d.positionId));
        expect(b.dealsOf(id, { orderId: d.orderId })).toEqual(scan.ofOrder(d.orderId));
        expect(b.order(id, d.orderId)).toEqual(scan.order(d.orderId));
      }
    };
    check(broker);
    // Appends after the index was first built are seen.
    const r = broker.placeOrder(id, {
      symbol: 'EURUSD',
      side: 'sell',
      type: 'market',
      volume: dec('0.2'),
      tag: 'late',
    });
    expect(broker.dealsOf(id, { positionId: r.position!.id })).toHaveLength(1);
    expect(broker.order(id, r.order.id)).toMatchObject({ id: r.order.id, tag: 'late' });
    check(broker);
    // A trim drops entries from the front: they are gone from the index too, the rest still found.
    const oldest = broker.deals(id)[0]!;
    broker.trimHistory(10);
    expect(broker.dealsOf(id, { orderId: oldest.orderId })).toEqual([]);
    expect(broker.order(id, oldest.orderId)).toBeUndefined();
    check(broker);
    check(new SimBroker({ snapshot: JSON.parse(JSON.stringify(broker.snapshot())) }));
  });

  it('a copy is handed out: changing it changes nothing in the broker', () => {
    const { broker, id } = traded(2);
    const d = broker.deals(id)[0]!;
    broker.dealsOf(id, { orderId: d.orderId })[0]!.orderId = 'x';
    broker.order(id, d.orderId)!.tag = 'x';
    expect(broker.dealsOf(id, { orderId: d.orderId })).toHaveLength(1);
    expect(broker.order(id, d.orderId)!.tag).not.toBe('x');
  });

  it('orders come in ticket order, as they did with a BigInt comparison', () => {
    const { broker, id } = traded(20);
    broker.placeOrder(id, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'limit',
      price: dec('1.0'),
      volume: dec('0.1'),
      tag: 'p',
    });
    const ids = broker.orders(id, { includeHistory: true }).map((o) => o.id);
    expect(ids).toEqual([...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0)));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a cTrader server event is built from index lookups, not from the account's whole history", () => {
    const { broker, id } = traded(50);
    const events: SimEvent[] = [];
    broker.onEvent((acc, ev) => acc === id && events.push(ev));
    const r = broker.placeOrder(id, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: 'n' });
    broker.closePosition(id, r.position!.id);
    // Whole-history reads counted on the broker the front end is given.
    let scans = 0;
    const counted = new Proxy(broker, {
      get(target, prop, recv) {
        const v = Reflect.get(target, prop, recv);
        if (prop === 'deals' || (prop === 'orders' && typeof v === 'function'))
          return (...args: unknown[]) => {
            scans++;
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const wire = new SimWire(counted);
    const replies = events.flatMap((ev) => serverExecutionEvents(counted, wire, id, '1', ev));
    expect(replies.length).toBeGreaterThanOrEqual(2);
    expect(scans).toBe(0);
  });
});
