import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { type CTraderSlave as Slave, sentSince, warmCTraderWorld } from '../helpers/ctrader-world.js';

/**
 * A close knows its position's symbol and volume from the execution events the connection already receives, so
 * it sends one request (the close), not a reconcile first: 50 accounts on one connection share one rate window
 * of 50, and 50 closes that each read first waited a whole second for their second half. (The factory now spreads
 * 50 accounts over four connections; the test keeps them on one, the window it is about.)
 */

const world = warmCTraderWorld;

let seq = 0;
const buy = (volume = '0.10'): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec(volume),
  tag: `cls${Date.now().toString(36)}${++seq}`,
});

async function open(s: Slave, volume?: string): Promise<string> {
  const out = await s.adapter.placeOrder(buy(volume));
  if (out.kind !== 'confirmed' || !out.positionId) throw new Error(`open failed: ${JSON.stringify(out)}`);
  return out.positionId;
}

describe('a cTrader close after our own open', () => {
  it('sends one request: the close (the position is known from the open fill, no reconcile)', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const positionId = await open(s);
    const before = w.server.requestStats().requests;
    const out = await s.adapter.closePosition(positionId);
    expect(out).toMatchObject({ kind: 'confirmed', positionId });
    expect(out.kind === 'confirmed' && out.filledVolume?.toString()).toBe('0.1');
    expect(sentSince(w, before)).toEqual({ ProtoOAClosePositionReq: 1 });
    expect(w.broker.positions(s.simAccountId)).toEqual([]);
  });

  it('a partial close made by hand at the broker in between: the close closes the rest, still without a read', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const positionId = await open(s);
    w.broker.closePosition(s.simAccountId, positionId, dec('0.04'));
    // The server's execution event for the manual close reaches the adapter (and its listeners) on the connection.
    await expect.poll(() => s.events.some((e) => e.kind === 'position_reduced')).toBe(true);
    const before = w.server.requestStats().requests;
    const out = await s.adapter.closePosition(positionId);
    expect(out).toMatchObject({ kind: 'confirmed', positionId });
    expect(out.kind === 'confirmed' && out.filledVolume?.toString()).toBe('0.06');
    expect(sentSince(w, before)).toEqual({ ProtoOAClosePositionReq: 1 });
    expect(w.broker.positions(s.simAccountId)).toEqual([]);
  });

  it('our own partial close, then the rest: the view follows our fills too', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const positionId = await open(s, '0.10');
    const before = w.server.requestStats().requests;
    expect(await s.adapter.closePosition(positionId, dec('0.03'))).toMatchObject({ kind: 'confirmed' });
    const out = await s.adapter.closePosition(positionId);
    expect(out.kind === 'confirmed' && out.filledVolume?.toString()).toBe('0.07');
    expect(sentSince(w, before)).toEqual({ ProtoOAClosePositionReq: 2 });
    expect(w.broker.positions(s.simAccountId)).toEqual([]);
  });

  it('after a reconnect the view is not trusted: the first close reads first, the next one does not', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const conn = [...w.factory.connections().values()][0]!;
    const first = await open(s);
    const second = await open(s);
    w.broker.faults.inject({ op: 'read', kind: 'disconnect', accountId: s.simAccountId, message: 'maintenance' });
    // The read in flight is resent after the reconnect and the account is authorised again (a new session).
    await s.adapter.accountInfo();
    expect(conn.reconnects).toBe(1);
    let before = w.server.requestStats().requests;
    expect(await s.adapter.closePosition(first)).toMatchObject({ kind: 'confirmed', positionId: first });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1, ProtoOAClosePositionReq: 1 });
    before = w.server.requestStats().requests;
    expect(await s.adapter.closePosition(second)).toMatchObject({ kind: 'confirmed', positionId: second });
    expect(sentSince(w, before)).toEqual({ ProtoOAClosePositionReq: 1 });
  });

  it('a position the view does not hold is read, and one that does not exist is still position_not_found', async () => {
    const w = await world();
    const s = w.slaves[0]!;
    const before = w.server.requestStats().requests;
    expect(await s.adapter.closePosition('999999')).toMatchObject({ kind: 'rejected', code: 'position_not_found' });
    expect(sentSince(w, before)).toEqual({ ProtoOAReconcileReq: 1 });
  });
});

describe('50 cTrader Slaves on one connection', () => {
  it('close with 50 requests in all (no reconcile): none of them waits behind the others for a place', async () => {
    const w = await world(50, 50);
    expect(w.factory.connections().size).toBe(1);
    const ids = await Promise.all(w.slaves.map((s) => open(s)));
    const before = w.server.requestStats().requests;
    const outs = await Promise.all(w.slaves.map((s, i) => s.adapter.closePosition(ids[i]!)));
    expect(outs.filter((o) => o.kind === 'confirmed')).toHaveLength(50);
    // 50 requests fit in the window of 50; before, 50 reads took it and the 50 closes waited a second for it.
    expect(sentSince(w, before)).toEqual({ ProtoOAClosePositionReq: 50 });
    for (const s of w.slaves) expect(w.broker.positions(s.simAccountId)).toEqual([]);
  }, 30_000);
});
