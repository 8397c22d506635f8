import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { appError } from '../helpers/app-error.js';
import { seedGroup, startEngine, storeCases, type EngineHarness } from './copy-harness.js';

/**
 * A Master market order whose answer never arrives, and which the broker then cancels or rejects instead of
 * filling: the order route's tag lookup finds it refused, so the trade ends rejected and no Slave gets
 * anything, neither now nor later through the watcher (which sees the order come and go), the settle loop
 * or the reconciler.
 */
const stores = await storeCases();

describe.each(stores)(
  'a Master order cancelled by the broker after a timeout is never copied (%s store)',
  (_name, db) => {
    const broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    let h: EngineHarness;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const d = await db();
      drop = d.drop;
      h = await startEngine({ broker, ...(d.databaseUrl ? { databaseUrl: d.databaseUrl } : {}), timeoutMs: 30 });
    });
    afterAll(async () => {
      await h?.close();
      await drop?.();
    });

    for (const refuseAs of ['cancelled', 'rejected'] as const) {
      it(`the broker ${refuseAs} it: trade rejected, no copy, nothing at any Slave`, async () => {
        // A group of its own per case: the watcher starts (again) and takes the new Master in.
        const g = await seedGroup(h.store, broker, { slaves: [{}, { rule: { reverse: true } }] });
        await h.watcher.stop();
        await h.start();
        const orders = new OrderService(h.store, h.adapters, h.engine);

        broker.faults.inject({ op: 'placeOrder', kind: 'cancel_after_timeout', refuseAs, accountId: g.masterSim });
        const err = await appError(
          orders.send(
            g.userId,
            g.master.id,
            {
              symbol: 'EURUSD',
              side: 'buy',
              volume: dec('0.5'),
              type: 'market',
              price: null,
              stopLoss: null,
              takeProfit: null,
            },
            'req-1',
          ),
        );
        expect(err.code).toBe('invalid_request');
        const tradeId = (err.details as { tradeId: string }).tradeId;

        // The watcher saw the order placed and cancelled; the settle loop and the reconciler run their schedule.
        await h.quiesce([g.master]);

        const trade = await h.store.trades.ownedTrade(g.userId, tradeId);
        expect(trade?.status).toBe('rejected');
        expect(trade?.masterOutcome).toMatchObject({ kind: 'rejected', code: `order_${refuseAs}` });
        expect(trade?.copiedTo ?? 0).toBe(0);
        const trades = await h.store.trades.listTrades(g.userId, { limit: 50 });
        expect(trades.map((t) => `${t.id}:${t.action}:${t.orderType}:${t.status}:${t.source}`)).toEqual([
          `${tradeId}:open:market:rejected:api`,
        ]);
        expect(await h.store.trades.intentsOfTrade(tradeId)).toEqual([]);
        for (const s of g.slaves) {
          expect(broker.positions(s.sim)).toEqual([]);
          expect(broker.orders(s.sim, { includeHistory: true })).toEqual([]);
        }
        // The Master's broker holds the refused order under the trade's tag, and no position.
        expect(broker.positions(g.masterSim)).toEqual([]);
        expect(broker.findByTag(g.masterSim, trade!.tag).order?.status).toBe(refuseAs);
      }, 30_000);
    }
  },
);
