import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, storeCases, type EngineHarness } from '../engine/copy-harness.js';

/**
 * The backstop of a worker paused between its lease check and the write's syscall: its write lands after the new
 * owner looked the tag up, found nothing and resent the copy under a new tag. The new owner's reconcile closes that
 * late original (the earlier attempt's tag, `prev_tags` of a copy confirmed and linked under the newer one), with a
 * ledger row and a drift event, at once rather than after the "young" wait a pass gives fresh copies.
 */
const stores = await storeCases();

describe.each(stores)('a late original of a resent copy (%s store)', (_name, openStore) => {
  const live: EngineHarness[] = [];
  const drops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const h of live.splice(0)) await h.close();
  });
  afterAll(async () => {
    for (const d of drops.splice(0)) await d();
  });

  it('is closed by the next reconcile, whatever its age; the copy under the newer tag stays', {
    timeout: 60_000,
  }, async () => {
    const broker = new SimBroker({ seed: 11 });
    broker.setPrice('EURUSD', '1.10000');
    const { drop, ...where } = await openStore();
    drops.push(drop);
    // Young copies wait a minute before a pass judges them: a late original must not.
    const h = await startEngine({ broker, ...where, reconcileYoungMs: 60_000, absentAfterMs: 0 });
    live.push(h);
    const g = await seedGroup(h.store, broker, { slaves: [{ rule: {} }] });
    const slave = g.slaves[0]!;
    // The first attempt never reaches the broker (the sleeper's write, still in its process).
    broker.faults.inject({ op: 'placeOrder', kind: 'timeout_before_apply', accountId: slave.sim, times: 1 });
    const res = await new OrderService(h.store, h.adapters, h.engine).send(
      g.userId,
      g.master.id,
      {
        symbol: 'EURUSD',
        side: 'buy',
        volume: dec('0.2'),
        type: 'market',
        price: null,
        stopLoss: null,
        takeProfit: null,
      },
      null,
    );
    await res.copies;
    await h.idle();
    // The new owner's settle pass: the tag is absent, the copy is sent again under a new tag.
    await h.settler.runOnce({ graceMs: 0 });
    await h.idle();
    const [row] = await h.store.trades.intentsOfTrade(res.tradeId);
    expect(row!.state).toBe('confirmed');
    const earlier = (row!.prevTags as string[] | null) ?? [];
    expect(earlier).toHaveLength(1);
    expect(broker.positions(slave.sim).map((p) => p.tag)).toEqual([row!.tag]);

    // The sleeper wakes and its write lands.
    broker.placeOrder(slave.sim, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: row!.filledVolume!,
      tag: earlier[0]!,
    });
    expect(broker.positions(slave.sim)).toHaveLength(2);

    const master = (await h.store.accounts.byId(g.master.id))!;
    const dry = await h.reconciler.run(master, { dryRun: true });
    expect(dry.drift.map((d) => [d.kind, d.action])).toEqual([['duplicate_copy', 'close_duplicate']]);
    const run = await h.reconciler.run(master, { dryRun: false });
    await h.idle();
    expect(broker.positions(slave.sim).map((p) => p.tag)).toEqual([row!.tag]);
    expect(run.healed).toHaveLength(1);
    const heal = await h.store.trades.intentsOfTrade(run.healed[0]!.tradeId!);
    expect(heal.map((r) => [r.slaveAccountId, r.action, r.state])).toEqual([
      [slave.account.id, 'heal_close', 'confirmed'],
    ]);
    const drift = (await h.store.events.after(g.userId, 0, 500)).filter((e) => e.type === 'reconcile.drift_found');
    expect(drift.map((e) => (e.payload as { kind: string }).kind)).toEqual(['duplicate_copy']);
    // The copy under the newer tag is still linked and open; a second pass finds nothing.
    expect((await h.reconciler.run(master, { dryRun: true })).drift).toEqual([]);
  });
});
