import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import { parseTarget } from '../../src/domain/slo/target.js';
import { SLO_EVALUATE_MS, SloEvaluator } from '../../src/engine/slo/evaluator.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { type EngineHarness, type SeededGroup, seedGroup, startEngine, storeCases } from '../engine/copy-harness.js';

/**
 * Service levels against simulator faults (docs/slo.md): a slow broker breaks the latency target, partial fills
 * the drift grade, a refused symbol the success ratio; each raises its own slo.breached for the faulted Slave
 * only, once while it lasts, and slo.recovered once the window has moved past it. A quiet group raises nothing.
 * Time: the evaluator's clock is injected (moved past the window for recovery); the schedule runs at a short
 * interval where the test watches it fire.
 */
const stores = await storeCases();
const TARGET = parseTarget({ latencyP99Ms: 1000, successPercent: 99, maxDriftGrade: 'minor', windowMinutes: 10 });

describe.each(stores)('service levels under simulator faults (%s store)', (_name, db) => {
  const broker = new SimBroker({ seed: 11 });
  let h: EngineHarness;
  let drop: () => Promise<void>;
  let offsetMs = 0;
  const evaluator = () => new SloEvaluator(h.store, { clock: () => Date.now() + offsetMs });

  beforeAll(async () => {
    const d = await db();
    drop = d.drop;
    // The broker's patience is above the slow broker's delay: the copy is late, not unresolved.
    h = await startEngine({ broker, timeoutMs: 5_000, ...(d.databaseUrl ? { databaseUrl: d.databaseUrl } : {}) });
    broker.setPrice('EURUSD', '1.10000');
  });
  afterAll(async () => {
    await h?.close();
    await drop?.();
  });

  const group = async () => {
    const g = await seedGroup(h.store, broker, { slaves: [{}, {}, {}] });
    const grp = g.master.groupId!;
    await h.store.slo.setTarget(g.userId, grp, TARGET);
    await h.watcher.stop();
    await h.start();
    return g;
  };
  const trade = async (g: SeededGroup, n = 1) => {
    for (let i = 0; i < n; i++)
      broker.placeOrder(g.masterSim, {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.1'),
        tag: newId('int'),
      });
    await h.idle();
  };
  const sloEvents = async (userId: string) =>
    (await h.store.events.after(userId, 0, 1000))
      .filter((e) => e.type.startsWith('slo.'))
      .map((e) => ({ type: e.type, accountId: e.accountId, metric: (e.payload as { metric: string }).metric }));

  it('a quiet group raises nothing, round after round', async () => {
    const g = await group();
    await trade(g, 3);
    const ev = evaluator();
    for (let i = 0; i < 3; i++) expect(await ev.runOnce()).toEqual({ breached: [], recovered: [] });
    expect(await sloEvents(g.userId)).toEqual([]);
    const levels = (await import('../../src/engine/slo/slo-levels.js')).groupLevels;
    const now = new Date(Date.now() + 1000);
    const l = await levels(
      h.store,
      g.master.groupId!,
      g.slaves.map((s) => s.account),
      new Date(0),
      now,
    );
    expect(l.group.success).toMatchObject({ attempted: 9, filled: 9, percent: 100 });
    expect(l.group.drift.grade).toBe('ok');
  }, 60_000);

  it('a slow broker, partial fills and a refused symbol each raise their own breach, once, on the next round', async () => {
    const g = await group();
    const [slow, partial, refused] = g.slaves.map((s) => s);
    broker.faults.inject({ op: 'placeOrder', kind: 'delay', delayMs: 1_500, accountId: slow!.sim, times: 1 });
    broker.faults.inject({
      op: 'placeOrder',
      kind: 'partial_fill',
      partialRatio: 0.5,
      accountId: partial!.sim,
      times: 1,
    });
    broker.faults.inject({
      op: 'placeOrder',
      kind: 'reject',
      message: 'symbol EURUSD is not tradable on this account',
      accountId: refused!.sim,
      times: 1,
    });
    // Two Master deals at once: the second is not held behind the slow broker's copy of the first (issue 43: the
    // watcher planned each deal after every copy of the one before had its answer, and all three Slaves breached).
    await trade(g, 2);
    // One round after the rows are written is enough: a breach shows at most one interval (15 s) after its copy.
    expect(SLO_EVALUATE_MS).toBeLessThanOrEqual(60_000);
    const ev = evaluator();
    const first = await ev.runOnce();
    const want = [
      { type: 'slo.breached', accountId: slow!.account.id, metric: 'latency_p99' },
      { type: 'slo.breached', accountId: partial!.account.id, metric: 'drift' },
      { type: 'slo.breached', accountId: refused!.account.id, metric: 'success' },
    ];
    const byAccount = (a: { accountId: string | null }, b: { accountId: string | null }) =>
      String(a.accountId).localeCompare(String(b.accountId));
    expect(first.breached).toHaveLength(3);
    expect((await sloEvents(g.userId)).sort(byAccount)).toEqual([...want].sort(byAccount));
    const [breach] = (await h.store.events.after(g.userId, 0, 1000)).filter((e) => e.type === 'slo.breached');
    expect(breach!.payload).toMatchObject({ groupId: g.master.groupId, windowMinutes: 10 });

    // While it lasts: more rounds (and a second evaluator, as after a restart) raise nothing more.
    await ev.runOnce();
    await evaluator().runOnce();
    expect(await sloEvents(g.userId)).toHaveLength(3);

    // The window moves past the faulted copies: each breach recovers, once.
    offsetMs = 11 * 60_000;
    try {
      const later = await ev.runOnce();
      expect(later.recovered.filter((r) => want.some((w) => w.accountId === r.accountId))).toHaveLength(3);
      await ev.runOnce();
    } finally {
      offsetMs = 0;
    }
    const all = await sloEvents(g.userId);
    expect(all.filter((e) => e.type === 'slo.recovered').sort(byAccount)).toEqual(
      want.map((w) => ({ ...w, type: 'slo.recovered' })).sort(byAccount),
    );
  }, 60_000);

  it('on its schedule, the evaluator raises a new breach without being asked', async () => {
    const g = await group();
    const ev = evaluator();
    ev.start(50);
    try {
      broker.faults.inject({ op: 'placeOrder', kind: 'reject', accountId: g.slaves[0]!.sim, times: 1 });
      await trade(g);
      await vi.waitFor(
        async () =>
          expect(await sloEvents(g.userId)).toEqual([
            { type: 'slo.breached', accountId: g.slaves[0]!.account.id, metric: 'success' },
          ]),
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await ev.stop();
    }
  }, 60_000);
});
