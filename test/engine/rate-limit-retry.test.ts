import { afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness } from './copy-harness.js';

/**
 * Issue 43, item 4: a Slave broker answering 429 for longer than ~10 s. The copy was rejected `rate_limited` after
 * 5 tries and never sent again, although the rule's max delay (60 s) had not passed, and that Slave lacked the
 * position. A refusal the broker says to retry is now sent again (after its Retry-After, backing off) until the max
 * delay has passed since the Master's action, and only then ends, with a reason that says so.
 *
 * The engine's clock is the wall clock plus what its waits added: a wait moves the clock at once, so 15 s of 429s
 * take no time here (never a wall-clock sleep).
 */
let h: EngineHarness;
afterEach(async () => h?.close());

const BOOTS_A_STORE = { timeout: 60_000 };

async function setUp(seed: number, rule: { maxDelayMs?: number } = {}, hold?: Promise<void>) {
  const broker = new SimBroker({ seed });
  broker.setPrice('EURUSD', '1.10000');
  let offset = 0;
  const waits: number[] = [];
  h = await startEngine({
    broker,
    clock: () => Date.now() + offset,
    sleep: async (ms) => {
      waits.push(ms);
      offset += ms;
      await (hold ?? new Promise((r) => setImmediate(r)));
    },
  });
  const g = await seedGroup(h.store, broker, { slaves: [{ rule }, { rule }] });
  await h.start();
  return { broker, g, waits };
}

async function masterBuys(broker: SimBroker, g: Awaited<ReturnType<typeof setUp>>['g'], before?: () => void) {
  broker.placeOrder(g.masterSim, { symbol: 'EURUSD', side: 'buy', type: 'market', volume: dec('0.1'), tag: 'by-hand' });
  before?.();
  await h.idle();
  const [trade] = await h.store.trades.listTrades(g.userId, { limit: 5 });
  return h.store.trades.intentsOfTrade(trade!.id);
}

describe('a Slave broker answering 429 for longer than 10 s', BOOTS_A_STORE, () => {
  it('429 with Retry-After 3 s for ~15 s: the copy fills once when the broker recovers', async () => {
    const { broker, g, waits } = await setUp(43);
    const [limitedSlave, otherSlave] = g.slaves;
    // Five refusals: the copy used to stop at the fifth (after 12 s) and end rejected.
    broker.faults.inject({
      op: 'placeOrder',
      kind: 'rate_limit',
      retryAfterSec: 3,
      accountId: limitedSlave!.sim,
      times: 5,
    });
    const rows = await masterBuys(broker, g);
    const row = rows.find((r) => r.slaveAccountId === limitedSlave!.account.id)!;
    expect(row).toMatchObject({ state: 'confirmed' });
    // Exactly one position: a refusal proves nothing was applied, and no try followed the fill.
    expect(broker.positions(limitedSlave!.sim)).toHaveLength(1);
    expect(broker.faults.list()).toHaveLength(0);
    // Retry-After honoured, backing off past it from the fifth: 3 + 3 + 3 + 3 + 4 = 16 s of the 60 s max delay.
    expect(waits).toEqual([3000, 3000, 3000, 3000, 4000]);
    // The other Slave's connection never waited for this one.
    expect(rows.find((r) => r.slaveAccountId === otherSlave!.account.id)).toMatchObject({ state: 'confirmed' });
    expect(broker.positions(otherSlave!.sim)).toHaveLength(1);
  });

  it('a refusal that outlasts the max delay ends rate_limited, saying it gave up and why', async () => {
    const { broker, g, waits } = await setUp(44, { maxDelayMs: 30_000 });
    const [limitedSlave] = g.slaves;
    const fault = broker.faults.inject({
      op: 'placeOrder',
      kind: 'rate_limit',
      retryAfterSec: 3,
      accountId: limitedSlave!.sim,
      times: 1000,
    });
    const rows = await masterBuys(broker, g);
    const row = rows.find((r) => r.slaveAccountId === limitedSlave!.account.id)!;
    expect(row.state).toBe('rejected');
    expect(row.outcome).toMatchObject({ kind: 'rejected', code: 'rate_limited' });
    const message = (row.outcome as { message: string }).message;
    expect(message).toMatch(
      /^gave up after 7 tries over 24(\.\d)? s: max delay \(30 s since the Master's action\) passed \(the next try, in 8 s, would be after it\); last answer: /,
    );
    // Seven tries, none after the max delay: 3 + 3 + 3 + 3 + 4 + 8 = 24 s, and 8 s more would pass 30 s.
    expect(broker.faults.list().find((f) => f.id === fault)?.remaining).toBe(1000 - 7);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(24_000);
    expect(broker.positions(limitedSlave!.sim)).toHaveLength(0);
  });

  it('a stop while the copy waits leaves its row to the settle pass, which sends it once while fresh', async () => {
    // The wait never ends by itself: only the stop ends it, as when the service is stopped during a 429 storm.
    const { broker, g } = await setUp(45, {}, new Promise<void>(() => undefined));
    const [limitedSlave] = g.slaves;
    broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 3, accountId: limitedSlave!.sim });
    const rows = await masterBuys(broker, g, () => {
      void (async () => {
        await expect.poll(() => h.engine.retrying.of(limitedSlave!.account.id, 0).waiting).toBe(1);
        h.engine.retrying.stop();
      })();
    });
    const row = rows.find((r) => r.slaveAccountId === limitedSlave!.account.id)!;
    // No outcome was written: the row is as recorded, the broker has nothing.
    expect(row.state).toBe('planned');
    expect(broker.positions(limitedSlave!.sim)).toHaveLength(0);
    // What the next start's settle pass does: the tag is not at the broker, the copy is fresh, so it is sent.
    await h.settler.runOnce({ graceMs: 0 });
    await h.idle();
    const [after] = (await h.store.trades.intentsOfTrade(row.tradeId)).filter((r) => r.id === row.id);
    expect(after).toMatchObject({ state: 'confirmed' });
    expect(broker.positions(limitedSlave!.sim)).toHaveLength(1);
  });

  it("the Master closes while an open's copy waits out a 429: the wait ends at once and the close is not held behind it", async () => {
    // The wait never ends by itself: only the Master's close can end it.
    const { broker, g } = await setUp(46, {}, new Promise<void>(() => undefined));
    const [limitedSlave, otherSlave] = g.slaves;
    broker.faults.inject({ op: 'placeOrder', kind: 'rate_limit', retryAfterSec: 30, accountId: limitedSlave!.sim });
    const opened = broker.placeOrder(g.masterSim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: dec('0.1'),
      tag: 'by-hand',
    }).position!;
    await expect.poll(() => h.engine.retrying.of(limitedSlave!.account.id, 0).waiting).toBe(1);
    broker.closePosition(g.masterSim, opened.id);
    await h.idle();
    const trades = await h.store.trades.tradesOfMasterPosition(g.master.id, opened.id);
    expect(trades.map((t) => t.action)).toEqual(['open', 'close']);
    const [openRows, closeRows] = await Promise.all(trades.map((t) => h.store.trades.intentsOfTrade(t.id)));
    expect(openRows!.find((r) => r.slaveAccountId === limitedSlave!.account.id)).toMatchObject({
      state: 'rejected',
      outcome: {
        code: 'superseded',
        message: expect.stringMatching(/^stopped retrying after 1 try: the Master closed position /),
      },
    });
    // Nothing opened late at the limited Slave; the other Slave's copy was closed with the Master's.
    expect(broker.positions(limitedSlave!.sim)).toHaveLength(0);
    expect(broker.positions(otherSlave!.sim)).toHaveLength(0);
    expect(closeRows!.find((r) => r.slaveAccountId === otherSlave!.account.id)).toMatchObject({ state: 'confirmed' });
    expect(closeRows!.find((r) => r.slaveAccountId === limitedSlave!.account.id)).toMatchObject({ state: 'skipped' });
  });
});
