import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/config/logger.js';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { OrderService } from '../../src/engine/order-service.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * Issue 10 §1: a Master that produces more actions than the ceiling in the window (a loop, a runaway EA)
 * trips its circuit breaker: copying from it pauses with the reason recorded and an event; resuming starts
 * afresh. The window runs on the engine's injected clock.
 */
let broker: SimBroker;
let h: EngineHarness;
let g: SeededGroup;
let quiet: SeededGroup;
let offset = 0;
const CEILING = 5;
/** What the engine logged, one JSON line each. */
const logged: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) logged.push(JSON.parse(line));
    done();
  },
});

const openOn = (sim: string) =>
  broker.placeOrder(sim, {
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: dec('0.1'),
    tag: `m${Math.random().toString(36).slice(2, 10)}`,
  }).position!;
const copies = (x: SeededGroup) => broker.positions(x.slaves[0]!.sim).length;
async function burst(x: SeededGroup, n: number): Promise<void> {
  // One at a time, as a terminal produces them: each is seen and copied before the next.
  for (let i = 0; i < n; i++) {
    openOn(x.masterSim);
    await h.idle();
  }
}
const eventsOf = async (x: SeededGroup, type: string) =>
  (await h.store.events.after(x.userId, 0, 1000)).filter((e) => e.type === type);

beforeAll(async () => {
  broker = new SimBroker({ seed: 5 });
  broker.setPrice('EURUSD', '1.10000');
  h = await startEngine({
    broker,
    clock: () => Date.now() + offset,
    breaker: { maxActions: CEILING, windowMs: 60_000 },
    logger: createLogger('warn', sink),
  });
  // Copies stay fresh while the test moves the engine's clock ahead.
  g = await seedGroup(h.store, broker, { slaves: [{ rule: { maxDelayMs: 3_600_000 } }] });
  quiet = await seedGroup(h.store, broker, { slaves: [{ rule: { maxDelayMs: 3_600_000 } }] });
  await h.start();
});
afterAll(async () => h?.close());

describe('per-Master circuit breaker', () => {
  it('actions spread over windows never trip it', async () => {
    await burst(quiet, CEILING);
    offset += 61_000;
    await burst(quiet, CEILING);
    expect(copies(quiet)).toBe(2 * CEILING);
    expect((await h.store.accounts.byId(quiet.master.id))!.status).toBe('connected');
  });

  it('over the ceiling in one window: the Master is paused with the reason and an event; the action over it is not copied', async () => {
    await burst(g, CEILING);
    expect(copies(g)).toBe(CEILING);
    await burst(g, 1);
    expect(copies(g)).toBe(CEILING);
    const m = (await h.store.accounts.byId(g.master.id))!;
    expect(m.status).toBe('paused');
    expect(m.statusReason).toMatch(/circuit breaker: 6 actions in 60 s, over the ceiling of 5/);
    // The operator's log says it too: a bench once stopped copying after 60 actions with nothing logged.
    expect(logged.filter((l) => l.accountId === g.master.id)).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(/circuit breaker tripped/),
        actions: 6,
        ceiling: 5,
      }),
    ]);
    expect((await eventsOf(g, 'account.circuit_breaker_tripped')).map((e) => e.payload)).toEqual([
      { actions: 6, windowMs: 60_000, ceiling: 5, reason: m.statusReason },
    ]);
    expect((await eventsOf(g, 'account.status_changed')).at(-1)!.payload).toMatchObject({
      before: 'connected',
      after: 'paused',
    });
    const [trade] = await h.store.trades.listTrades(g.userId, { accountId: g.master.id, limit: 1 });
    expect((await h.store.trades.intentsOfTrade(trade!.id))[0]).toMatchObject({
      state: 'skipped',
      skipReason: expect.stringContaining('master_not_eligible'),
    });
    // Still paused: more activity is recorded, not copied, and does not trip it again.
    await burst(g, 2);
    expect(copies(g)).toBe(CEILING);
    expect(await eventsOf(g, 'account.circuit_breaker_tripped')).toHaveLength(1);
    // Another Master has its own window (its last burst is a window ago).
    offset += 61_000;
    await burst(quiet, 1);
    expect(copies(quiet)).toBe(2 * CEILING + 1);
  });

  it('actions found missed on a watch start and reconciler heals do not count', async () => {
    const m = (await h.store.accounts.byId(quiet.master.id))!;
    const old = {
      id: null,
      kind: 'close' as const,
      masterAccountId: m.id,
      positionId: 'gone-1',
      orderId: null,
      symbol: 'EURUSD',
      side: 'buy' as const,
      type: 'market' as const,
      volume: dec('0.1'),
      prevVolume: dec('0.1'),
      price: null,
      stopLoss: null,
      takeProfit: null,
      at: Date.now() + offset,
      item: {
        accountId: m.id,
        kind: 'position' as const,
        itemId: 'gone-1',
        symbol: 'EURUSD',
        side: 'buy' as const,
        orderType: 'market' as const,
        volume: dec('0.1'),
      },
    };
    for (let i = 0; i < 2 * CEILING; i++)
      await (
        await h.engine.copy(
          m,
          { ...old, id: `old-${i}`, positionId: `gone-${i}` },
          { source: 'watcher', catchUp: true },
        )
      ).done;
    for (let i = 0; i < 2 * CEILING; i++)
      await (
        await h.engine.copy(
          m,
          { ...old, positionId: `heal-${i}`, at: Date.now() + offset },
          { source: 'reconciler', intentAction: 'heal_close' },
        )
      ).done;
    expect((await h.store.accounts.byId(quiet.master.id))!.status).toBe('connected');
  });

  it('resuming clears it: copying starts again with a fresh window', async () => {
    // Back in the window of the trip: without the reset, the next action would trip it again.
    offset -= 61_000;
    // What POST /accounts/:id/resume writes.
    await h.store.accounts.setStatus(g.master.id, 'connected', null);
    await burst(g, CEILING);
    expect(copies(g)).toBe(2 * CEILING);
    expect((await h.store.accounts.byId(g.master.id))!.status).toBe('connected');
  });
  it("orders sent through the order route do not count: a burst of the user's own orders is no loop", async () => {
    const x = await seedGroup(h.store, broker, { slaves: [{ rule: { maxDelayMs: 3_600_000 } }] });
    const orders = new OrderService(h.store, h.adapters, h.engine, () => Date.now() + offset);
    for (let i = 0; i < 2 * CEILING; i++) {
      const r = await orders.send(
        x.userId,
        x.master.id,
        {
          symbol: 'EURUSD',
          side: 'buy',
          volume: dec('0.1'),
          type: 'market',
          price: null,
          stopLoss: null,
          takeProfit: null,
        },
        null,
      );
      await r.copies;
    }
    await h.idle();
    expect((await h.store.accounts.byId(x.master.id))!.status).toBe('connected');
    expect(copies(x)).toBe(2 * CEILING);
    expect(await eventsOf(x, 'account.circuit_breaker_tripped')).toEqual([]);
  });
});
