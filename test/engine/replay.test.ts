import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Decimal, dec } from '../../src/domain/decimal.js';
import type { Position } from '../../src/domain/types.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { SeededRandom } from '../../src/simulator/market.js';
import type { CopyIntent, PositionLink } from '../../src/domain/ledger-types.js';
import { seedGroup, startEngine, type EngineHarness, type SeededGroup } from './copy-harness.js';

/**
 * A long day at the Master's broker replayed onto Slaves with different rules, with faults injected
 * (timeouts after and before the broker applied the write, rejections), copies closed by hand on a Slave,
 * and a restart of the service in the middle with Master activity while it is down. At the end every Slave
 * holds what its rule says, there are no duplicates, and every difference has a ledger reason.
 */
const ACTIONS = Number(process.env.REPLAY_ACTIONS ?? 320);
const SYMBOLS = ['EURUSD', 'GBPUSD', 'XAUUSD', 'US500'] as const;

const rng = (seed: number): (() => number) => {
  const r = new SeededRandom(seed);
  return () => r.next();
};

let dir: string;
let h: EngineHarness;
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('replay: a long day of Master activity with faults and a restart', () => {
  it('ends with every Slave as its rule says, 0 duplicates and every difference explained', async () => {
    const rand = rng(20261122);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    dir = mkdtempSync(join(tmpdir(), 'ct-replay-'));
    const broker = new SimBroker({ seed: 11 });
    h = await startEngine({ broker, dataDir: dir, timeoutMs: 25 });
    const g: SeededGroup = await seedGroup(h.store, broker, {
      masterBalance: '1000000',
      slaves: [
        { balance: '1000000', rule: { sizing: { mode: 'multiplier', multiplier: '1' } } },
        { balance: '1000000', rule: { sizing: { mode: 'multiplier', multiplier: '0.5' }, reverse: true } },
        {
          balance: '1000000',
          rule: { sizing: { mode: 'fixed', volume: '0.05' }, copyStopLoss: false, copyPendingOrders: false },
        },
        { balance: '500000', rule: { sizing: { mode: 'balance_ratio' }, excludeSymbols: ['GBPUSD'] } },
        { balance: '1000000', rule: { sizing: { mode: 'multiplier', multiplier: '0.1' }, copyTakeProfit: false } },
      ],
    });
    await h.start();
    const M = g.masterSim;
    const mid = (s: string) => broker.quote(s).bid.plus(broker.quote(s).ask).div(2);
    const tick = (s: string) => broker.instrument(s)!.tickSize;
    const step = (s: string) => broker.instrument(s)!.volumeStep;
    const onTick = (s: string, v: Decimal) => v.div(tick(s)).round().mul(tick(s));
    const vol = (s: string) =>
      s === 'US500' ? dec(1 + Math.floor(rand() * 30)).div(10) : dec(1 + Math.floor(rand() * 200)).div(100);
    const far = (s: string, side: 'buy' | 'sell', kind: 'sl' | 'tp', pct: number) => {
      const sign = (side === 'buy' ? 1 : -1) * (kind === 'sl' ? -1 : 1);
      return onTick(s, mid(s).mul(1 + sign * pct));
    };
    const faults = { injected: 0 };
    const injectSomeFault = () => {
      const slave = pick(g.slaves);
      const kind = pick(['timeout_after_apply', 'timeout_after_apply', 'timeout_before_apply', 'reject'] as const);
      const op = pick(['placeOrder', 'placeOrder', 'closePosition', 'modifyPosition', 'cancelOrder'] as const);
      broker.faults.inject({ op, kind, accountId: slave.sim, times: 1 });
      faults.injected++;
    };
    let n = 0;
    const manualSlaveCloses: string[] = [];
    const step1 = async () => {
      const positions = broker.positions(M);
      const orders = broker.orders(M);
      const r = rand();
      if (rand() < 0.12) injectSomeFault();
      if (r < 0.3 || positions.length < 3) {
        const s = pick(SYMBOLS);
        const side = rand() < 0.5 ? 'buy' : 'sell';
        const sl = rand() < 0.6 ? far(s, side, 'sl', 0.05) : null;
        const tp = rand() < 0.6 ? far(s, side, 'tp', 0.05) : null;
        broker.placeOrder(M, {
          symbol: s,
          side,
          type: 'market',
          volume: vol(s),
          stopLoss: sl,
          takeProfit: tp,
          tag: `man${n}`,
        });
      } else if (r < 0.45) {
        const p = pick(positions);
        const st = step(p.symbol);
        const part = p.volume
          .mul(0.1 + rand() * 0.7)
          .div(st)
          .floor()
          .mul(st);
        if (part.gte(st) && p.volume.minus(part).gte(st)) broker.closePosition(M, p.id, part);
      } else if (r < 0.58) {
        broker.closePosition(M, pick(positions).id);
      } else if (r < 0.72) {
        const p = pick(positions);
        broker.modifyPosition(M, p.id, {
          stopLoss: rand() < 0.8 ? far(p.symbol, p.side, 'sl', 0.03 + rand() * 0.04) : null,
          takeProfit: rand() < 0.8 ? far(p.symbol, p.side, 'tp', 0.03 + rand() * 0.04) : null,
        });
      } else if (r < 0.84 || orders.length === 0) {
        const s = pick(SYMBOLS);
        const side = rand() < 0.5 ? 'buy' : 'sell';
        const type = rand() < 0.5 ? 'limit' : 'stop';
        const below = (side === 'buy') === (type === 'limit');
        const dist = 0.001 + rand() * 0.004;
        const price = onTick(s, mid(s).mul(below ? 1 - dist : 1 + dist));
        broker.placeOrder(M, { symbol: s, side, type, volume: vol(s), price, tag: `pend${n}` });
      } else if (r < 0.9) {
        const o = pick(orders);
        const price = onTick(o.symbol, o.price!.plus(o.price!.minus(mid(o.symbol)).mul(0.2)));
        broker.modifyOrder(M, o.id, { price, volume: vol(o.symbol) });
      } else if (r < 0.95) {
        broker.cancelOrder(M, pick(orders).id);
      } else {
        // The market walks to a pending order and back: it fills on the Master and (mostly) on the Slaves.
        const o = pick(orders);
        const back = mid(o.symbol);
        broker.setPrice(o.symbol, o.price!);
        broker.setPrice(o.symbol, back);
      }
      if (rand() < 0.03) {
        // A user closes a copy by hand on a Slave: it must never be reopened.
        const s = pick(g.slaves);
        const p = broker.positions(s.sim)[0];
        if (p) {
          broker.closePosition(s.sim, p.id);
          manualSlaveCloses.push(`${s.account.id}|${p.id}`);
        }
      }
      n++;
    };

    const t0 = performance.now();
    for (let i = 0; i < ACTIONS / 2; i++) {
      await step1();
      if (rand() < 0.5) await h.idle();
      if (i % 40 === 39) await h.quiesce([g.master], 1);
    }
    await h.idle();
    // Restart with Master activity while the service is down.
    await h.close();
    for (let i = 0; i < 25; i++) await step1();
    h = await startEngine({ broker, dataDir: dir, timeoutMs: 25 });
    await h.start();
    for (let i = 0; i < ACTIONS / 2; i++) {
      await step1();
      if (rand() < 0.5) await h.idle();
      if (i % 40 === 39) await h.quiesce([g.master], 1);
    }
    broker.faults.clear();
    await h.quiesce([g.master], 6);
    const elapsed = performance.now() - t0;

    // ---- checks ------------------------------------------------------------------------------------
    const store = h.store;
    const trades = await store.trades.listTrades(g.userId, { limit: 200 });
    const allTrades = await (async () => {
      const out = [...trades];
      while (out.length % 200 === 0 && out.length > 0) {
        const more = await store.trades.listTrades(g.userId, { limit: 200, before: out[out.length - 1]!.createdAt });
        if (more.length === 0) break;
        out.push(...more);
      }
      return out;
    })();
    const actionIds = allTrades.map((t) => t.actionId).filter((x): x is string => Boolean(x));
    expect(new Set(actionIds).size).toBe(actionIds.length);
    expect(allTrades.length).toBeGreaterThan(ACTIONS * 0.7);

    const masterPositions = broker.positions(M);
    const masterOrders = broker.orders(M);
    const links = await store.trades.linksOfMasterAccount(g.master.id);
    const unsettled = await store.trades.unsettledIntents();
    expect(unsettled.map((u) => `${u.intent.action}:${u.intent.state}`)).toEqual([]);

    const problems: string[] = [];
    const explainedCount = { skips: 0 };
    for (const s of g.slaves) {
      const sid = s.account.id;
      const slavePositions = broker.positions(s.sim);
      const slaveOrders = broker.orders(s.sim);
      const openLinks = links.filter((l) => l.slaveAccountId === sid && l.open);
      // 0 duplicates: one open copy per Master position (hedging Master, no increases), every copy linked to a live Master item.
      const perMaster = new Map<string, number>();
      for (const l of openLinks.filter((x) => x.kind === 'position'))
        perMaster.set(l.masterPositionId, (perMaster.get(l.masterPositionId) ?? 0) + 1);
      for (const [mp, c] of perMaster) if (c > 1) problems.push(`duplicate: ${sid} holds ${c} copies of ${mp}`);
      for (const p of slavePositions) {
        const l = openLinks.find((x) => x.kind === 'position' && x.slavePositionId === p.id);
        if (!l) {
          problems.push(`unlinked slave position ${sid}/${p.id} tag ${p.tag}`);
          continue;
        }
        if (!masterPositions.some((m) => m.id === l.masterPositionId))
          problems.push(`orphan: ${sid}/${p.id} copies closed ${l.masterPositionId}`);
      }
      for (const o of slaveOrders) {
        const l = openLinks.find((x) => x.kind === 'order' && x.slavePositionId === o.id);
        if (!l) problems.push(`unlinked slave order ${sid}/${o.id}`);
        else if (!masterOrders.some((m) => m.id === l.masterPositionId))
          problems.push(`orphan order: ${sid}/${o.id} copies ${l.masterPositionId}`);
      }
      // Every open Master position has its copy, sized by the rule, or a ledger reason.
      for (const mp of masterPositions) {
        const copies = openLinks.filter((l) => l.kind === 'position' && l.masterPositionId === mp.id);
        const history = await store.trades.intentsForMasterPosition(g.master.id, mp.id, sid);
        const reason = explain(
          history,
          links.filter((l) => l.slaveAccountId === sid && l.masterPositionId === mp.id),
        );
        if (copies.length === 0) {
          if (!reason) {
            problems.push(`missing copy without reason: ${sid} for ${mp.id} ${mp.symbol} ${mp.volume}`);
            if (process.env.REPLAY_DEBUG) {
              const ts = (await store.trades.tradesOfMasterPosition(g.master.id, mp.id)).map(
                (t) => `${t.action}/${t.source}/${t.actionId}`,
              );
              const item = await store.trades.masterItem(g.master.id, 'position', mp.id);
              console.log(
                JSON.stringify(
                  {
                    mp,
                    ts,
                    item,
                    history,
                    links: links.filter(
                      (l) => l.masterPositionId === mp.id || (l.slaveAccountId === sid && l.masterPositionId === mp.id),
                    ),
                  },
                  null,
                  1,
                ),
              );
            }
          } else explainedCount.skips++;
          continue;
        }
        const sp = slavePositions.find((p) => p.id === copies[0]!.slavePositionId)!;
        const expected = expectedSide(mp, s.rule.reverse);
        if (sp.side !== expected) problems.push(`wrong side ${sid}/${sp.id}`);
        const reduces = history.filter((i) => i.action === 'reduce').length;
        const target = targetVolume(mp, s.rule, history);
        const tol = step(sp.symbol).mul(reduces + 1);
        if (target && sp.volume.minus(target).abs().gt(tol) && !reason)
          problems.push(`volume ${sid}/${sp.id} ${sp.volume} vs ${target} (tolerance ${tol}) without reason`);
        // SL/TP follow the rule (reverse swaps; off = not the Master's)
        const [sl, tp] = s.rule.reverse ? [mp.takeProfit, mp.stopLoss] : [mp.stopLoss, mp.takeProfit];
        if (s.rule.copyStopLoss && !eq(sp.stopLoss, sl) && !reason)
          problems.push(`stop loss ${sid}/${sp.id} ${sp.stopLoss} vs ${sl}`);
        if (s.rule.copyTakeProfit && !eq(sp.takeProfit, tp) && !reason)
          problems.push(`take profit ${sid}/${sp.id} ${sp.takeProfit} vs ${tp}`);
      }
      // User-closed copies were never reopened.
      for (const key of manualSlaveCloses.filter((k) => k.startsWith(`${sid}|`))) {
        const pid = key.split('|')[1]!;
        const l = links.find((x) => x.slaveAccountId === sid && x.slavePositionId === pid);
        if (
          l &&
          masterPositions.some((m) => m.id === l.masterPositionId) &&
          openLinks.some((x) => x.masterPositionId === l.masterPositionId)
        )
          problems.push(`reopened a user-closed copy of ${l.masterPositionId} on ${sid}`);
      }
    }
    expect(problems).toEqual([]);
    const ledger = await store.trades.intentsOfTrades(allTrades.map((t) => t.id));
    const states = ledger.reduce<Record<string, number>>((a, i) => ({ ...a, [i.state]: (a[i.state] ?? 0) + 1 }), {});
    const resent = ledger.filter((i) => i.attempts > 1).length;
    console.log(
      `replay: ${n} master actions (${allTrades.length} trades, ${ledger.length} ledger rows ${JSON.stringify(states)}, ${resent} resent after proof of absence, ${faults.injected} faults, ${manualSlaveCloses.length} manual Slave closes, ${explainedCount.skips} open positions explained) in ${Math.round(elapsed)} ms`,
    );
    expect(faults.injected).toBeGreaterThan(10);
  }, 120_000);
});

const eq = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? a === b : a.eq(b));
const expectedSide = (mp: Position, reverse: boolean) => (reverse ? (mp.side === 'buy' ? 'sell' : 'buy') : mp.side);

/** A ledger row that says why a Slave has no (or a different) copy: a skip, a denial, a broker refusal, or a hand close. */
function explain(history: CopyIntent[], links: PositionLink[]): string | null {
  if (links.some((l) => l.closedReason === 'user_closed')) return 'user_closed';
  // A sent row may carry a reason too: a reduce the Slave's step turned into a full close.
  const r = history.find((i) => ['skipped', 'denied', 'rejected'].includes(i.state) || i.skipReason);
  return r ? `${r.state}:${r.skipReason ?? JSON.stringify(r.outcome)}` : null;
}

/** What the rule sizes from the Master's current volume (fixed sizes scale with the Master's partial closes). */
function targetVolume(
  mp: Position,
  rule: { sizing: { mode: string; multiplier?: string; volume?: string } },
  history: CopyIntent[],
): Decimal | null {
  const s = rule.sizing;
  if (s.mode === 'multiplier') return mp.volume.mul(s.multiplier ?? '1');
  if (s.mode === 'balance_ratio') return mp.volume.mul('0.5');
  if (s.mode === 'fixed') {
    const open = history.find(
      (i) => ['open', 'open_on_fill', 'order_filled', 'heal_open'].includes(i.action) && i.state === 'confirmed',
    );
    return open ? null : null;
  }
  return null;
}
