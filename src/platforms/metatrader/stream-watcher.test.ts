import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import type { Order, Position } from '../../domain/types.js';
import type { BrokerEvent } from '../adapter.js';
import type { AccountSnapshot } from '../polling-watcher.js';
import type { MtStreamEvents } from './stream-client.js';
import { type MtStreamState, StreamingWatcher } from './stream-watcher.js';

const T = '2026-01-01T00:00:00.000Z';
const pos = (id: string, volume = '1'): Position => ({
  id,
  symbol: 'EURUSD',
  side: 'buy',
  volume: dec(volume),
  openPrice: dec('1.1'),
  currentPrice: dec('1.1'),
  stopLoss: null,
  takeProfit: null,
  profit: null,
  openedAt: T,
  tag: null,
});
const ord = (id: string, status: Order['status'] = 'pending'): Order => ({
  id,
  symbol: 'EURUSD',
  side: 'buy',
  type: 'limit',
  volume: dec('1'),
  filledVolume: dec(status === 'filled' ? '1' : '0'),
  price: dec('1.0'),
  stopLoss: null,
  takeProfit: null,
  status,
  positionId: null,
  createdAt: T,
  updatedAt: T,
  tag: null,
});
const noUpdate = {
  updatedPositions: [],
  removedPositionIds: [],
  updatedOrders: [],
  completedOrderIds: [],
  historyOrders: [],
};

/** A watcher on a scripted stream and a scripted REST: every source is driven by the test, no timer fires. */
function harness() {
  let events: MtStreamEvents | null = null;
  const states: MtStreamState[] = [];
  const polls: Array<(s: AccountSnapshot) => void> = [];
  let restFinals = 0;
  const w = new StreamingWatcher({
    open: (e) => {
      events = e;
      return { close: () => {} };
    },
    snapshot: () => new Promise((r) => polls.push(r)),
    finalOrder: async () => {
      restFinals++;
      return null;
    },
    pollIntervalMs: 1,
    onState: (st) => states.push(st),
  });
  const seen: BrokerEvent[] = [];
  const off = w.add((ev) => seen.push(ev));
  const kinds = () => seen.map((e) => `${e.kind}:${e.position?.id ?? e.order?.id}`);
  return { w, stream: () => events!, polls, seen, kinds, off, states, restFinals: () => restFinals };
}

describe('StreamingWatcher', () => {
  it('diffs each update on top of the synchronized state; a final order from the stream needs no REST read', async () => {
    const h = harness();
    h.stream().synchronized({ positions: [pos('p1')], orders: [ord('o1')], historyOrders: [] });
    h.stream().update({ ...noUpdate, updatedPositions: [pos('p2')] });
    h.stream().update({ ...noUpdate, updatedPositions: [pos('p1', '0.4')] });
    h.stream().update({ ...noUpdate, completedOrderIds: ['o1'], historyOrders: [ord('o1', 'filled')] });
    h.stream().update({ ...noUpdate, removedPositionIds: ['p2'] });
    await h.w.settled();
    expect(h.kinds()).toEqual(['position_opened:p2', 'position_reduced:p1', 'order_filled:o1', 'position_closed:p2']);
    expect(h.restFinals()).toBe(0);
    h.off();
  });

  it('a resynchronization after a drop reports only what changed meanwhile', async () => {
    const h = harness();
    h.stream().synchronized({ positions: [pos('p1'), pos('p2')], orders: [], historyOrders: [] });
    h.stream().down('socket transport close');
    h.stream().synchronized({ positions: [pos('p2'), pos('p3')], orders: [ord('o9')], historyOrders: [] });
    await h.w.settled();
    expect(h.kinds().sort()).toEqual(['order_placed:o9', 'position_closed:p1', 'position_opened:p3']);
    h.off();
  });

  it('polls only while the stream is down, and drops a poll answered after the stream came back', async () => {
    const h = harness();
    h.stream().synchronized({ positions: [pos('p1')], orders: [], historyOrders: [] });
    await h.w.settled();
    expect(h.polls).toHaveLength(0);
    h.stream().down('socket transport close');
    await expect.poll(() => h.polls.length).toBe(1);
    // While down, a poll is the picture: p2 reported from it.
    h.polls[0]!({ positions: [pos('p1'), pos('p2')], orders: [] });
    await expect.poll(() => h.kinds()).toEqual(['position_opened:p2']);
    await expect.poll(() => h.polls.length).toBe(2);
    h.stream().synchronized({ positions: [pos('p1'), pos('p2'), pos('p3')], orders: [], historyOrders: [] });
    // The poll started before the stream returned answers late with an older picture: ignored, nothing closes.
    h.polls[1]!({ positions: [pos('p1')], orders: [] });
    await h.w.settled();
    await h.w.settled();
    expect(h.kinds()).toEqual(['position_opened:p2', 'position_opened:p3']);
    h.off();
  });

  it('reports the fallback to polling once, with the reason the stream gave, and the return to streaming', async () => {
    const h = harness();
    h.stream().error?.(new Error('xhr poll error'));
    await expect.poll(() => h.polls.length).toBe(1);
    expect(h.states).toEqual([{ mode: 'polling', reason: 'xhr poll error' }]);
    expect(h.w.degradedReason).toBe('xhr poll error');
    h.polls[0]!({ positions: [], orders: [] });
    // Further polls of the same spell are not reported again.
    await expect.poll(() => h.polls.length).toBe(2);
    expect(h.states).toHaveLength(1);
    h.stream().synchronized({ positions: [], orders: [], historyOrders: [] });
    expect(h.states).toEqual([{ mode: 'polling', reason: 'xhr poll error' }, { mode: 'streaming' }]);
    expect(h.w.degradedReason).toBeNull();
    h.stream().down('terminal disconnected');
    await expect.poll(() => h.states.length).toBe(3);
    expect(h.states[2]).toEqual({ mode: 'polling', reason: 'terminal disconnected' });
    h.off();
  });
});
