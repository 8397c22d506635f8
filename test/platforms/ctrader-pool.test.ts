import { describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { ctraderWorld, type CTraderWorld as World, warmCTrader as warm } from '../helpers/ctrader-world.js';

/**
 * cTrader accounts of one endpoint over a small pool of connections, through the real wire: a fan-out fits the
 * connections' windows, and a connection the server refuses (CONNECTIONS_LIMIT_EXCEEDED) loses no account.
 */

let seq = 0;
const buy = (): PlaceOrderRequest => ({
  symbol: 'EURUSD',
  side: 'buy',
  type: 'market',
  volume: dec('0.10'),
  tag: `pool${Date.now().toString(36)}${++seq}`,
});

/** Every Slave opens, and closes as soon as its open is in: 2 requests each, all at once. */
async function fanOut(w: World): Promise<{ opened: number; closed: number }> {
  const outs = await Promise.all(
    w.slaves.map(async (s) => {
      const open = await s.adapter.placeOrder(buy());
      if (open.kind !== 'confirmed' || !open.positionId) return { open: false, close: false };
      const close = await s.adapter.closePosition(open.positionId);
      return { open: true, close: close.kind === 'confirmed' };
    }),
  );
  return { opened: outs.filter((o) => o.open).length, closed: outs.filter((o) => o.close).length };
}

/** Requests that waited for a place in their connection's window, all connections together. */
const waited = (w: World) => [...w.factory.connections().values()].reduce((n, c) => n + c.rateWindow().waited, 0);

/** The set-up's requests have left every window (they are counted until a second after their answer). */
async function windowsDrained(w: World): Promise<void> {
  await expect
    .poll(() => [...w.factory.connections().values()].every((c) => c.rateWindow().held === 0), { timeout: 5_000 })
    .toBe(true);
}

describe('a cTrader fan-out over the connection pool', () => {
  it('50 Slaves (default pool: 4 connections of 12-13): 50 opens and 50 closes, none waits for a place', async () => {
    const w = await ctraderWorld(50);
    expect([...w.factory.connections().values()].map((c) => c.accountCount())).toEqual([13, 13, 12, 12]);
    await warm(w);
    await windowsDrained(w);
    const before = waited(w);
    expect(await fanOut(w)).toEqual({ opened: 50, closed: 50 });
    // 24-26 requests per connection fit its window of 50: no request queued behind another's second.
    expect(waited(w) - before).toBe(0);
    expect(w.server.requestStats().blocked).toBe(0);
  }, 30_000);

  it('the same 50 on one connection (accountsPerConnection 50): the closes wait for the opens to leave the window', async () => {
    const w = await ctraderWorld(50, { factory: { accountsPerConnection: 50 } });
    expect(w.factory.connections().size).toBe(1);
    await warm(w);
    await windowsDrained(w);
    const before = waited(w);
    expect(await fanOut(w)).toEqual({ opened: 50, closed: 50 });
    // The 50 opens take every place until a second after their answers; each close comes right after one.
    expect(waited(w) - before).toBeGreaterThan(0);
    expect(w.server.requestStats().blocked).toBe(0);
  }, 30_000);
});

describe('CONNECTIONS_LIMIT_EXCEEDED from the server', () => {
  it('a refused connection hands its accounts to the one that works: none lost, orders and events go on', async () => {
    const w = await ctraderWorld(2, { factory: { accountsPerConnection: 2 }, server: { maxConnectionsPerApp: 1 } });
    await warm(w);
    expect(w.factory.connections().size).toBe(1);
    // Two more accounts: past the threshold, so a second connection, which the server refuses at its app auth.
    const late = [await w.addSlave(), await w.addSlave()];
    expect(w.factory.connections().size).toBe(2);
    const opened = await Promise.all(late.map((s) => s.adapter.placeOrder(buy())));
    expect(opened.map((o) => o.kind)).toEqual(['confirmed', 'confirmed']);
    for (const s of late) expect(w.broker.positions(s.simAccountId)).toHaveLength(1);
    const [only] = [...w.factory.connections().values()];
    expect(w.factory.connections().size).toBe(1);
    expect(only!.accountCount()).toBe(4);
    await expect.poll(() => w.server.connectionCount()).toBe(1);
    // Its event stream moved with it: a close by hand at the broker reaches the adapter's listener.
    const s = late[0]!;
    const positionId = w.broker.positions(s.simAccountId)[0]!.id;
    w.broker.closePosition(s.simAccountId, positionId);
    await expect.poll(() => s.events.some((e) => e.kind === 'position_closed')).toBe(true);
    // The pool's cap is now the one connection that works: a fifth account does not try another.
    await w.addSlave();
    expect(w.factory.connections().size).toBe(1);
    expect(await w.slaves[4]!.adapter.placeOrder(buy())).toMatchObject({ kind: 'confirmed' });
  }, 30_000);

  it('the only connection refused keeps retrying (as at start-up) and its accounts stay on it', async () => {
    const w = await ctraderWorld(1, { factory: { timeoutMs: 500 }, server: { maxConnectionsPerApp: 0 } });
    const err = await w.slaves[0]!.adapter.listPositions().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'upstream_unavailable' });
    const [conn] = [...w.factory.connections().values()];
    expect(conn!.lastError).toMatch(/CONNECTIONS_LIMIT_EXCEEDED/);
    expect(conn!.accountCount()).toBe(1);
    await expect.poll(() => conn!.reconnects).toBeGreaterThan(0);
  }, 30_000);
});
