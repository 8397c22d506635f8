import { describe, expect, it } from 'vitest';
import { dec, floorToStep } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { engineOnStore, seedGroup, storeCases } from './copy-harness.js';

/**
 * Sizing by risk % of the Slave's equity, end to end: the copy's volume is what loses the given share of the
 * Slave's equity at the stop the copy carries, measured from the Slave's own price, in the Slave's account
 * currency (a cross through the Slave broker's conversion pair). Without a stop loss the copy is skipped with
 * the reason in the ledger. Both the watcher path and the order route.
 */
const stores = await storeCases();
const risk = (pct: string) => ({ sizing: { mode: 'risk_percent' as const, riskPercent: pct } });
const LOT = dec(100_000);

describe.each(stores)('risk_percent sizing (%s store)', (_name, db) => {
  const broker = new SimBroker({ seed: 11 });
  broker.setPrice('EURUSD', '1.25000');
  broker.setPrice('GBPUSD', '1.27000');
  const engine = engineOnStore(db, broker);

  const group = async () => {
    const g = await seedGroup(engine().store, broker, {
      slaves: [
        { balance: '10000', rule: risk('1') },
        { balance: '20000', rule: { ...risk('0.5'), reverse: true } },
        { balance: '10000', rule: risk('1'), currency: 'EUR' },
        { balance: '10000', rule: {} },
      ],
    });
    await engine().watcher.stop();
    await engine().start();
    return g;
  };
  const volumes = (sims: string[]) => sims.map((s) => broker.positions(s).map((p) => p.volume.toString()));

  it('watcher path: each Slave risks its share at its own stop; a plain rule copies the Master volume', async () => {
    const g = await group();
    const sl = dec('1.26500');
    const tp = dec('1.28000');
    broker.placeOrder(g.masterSim, {
      symbol: 'GBPUSD',
      side: 'buy',
      type: 'market',
      volume: dec('3'),
      stopLoss: sl,
      takeProfit: tp,
      tag: newId('int'),
    });
    // Prices are still (no feed running): what the Slaves got is what the planner saw.
    const { bid, ask } = broker.quote('GBPUSD');
    await engine().idle();
    // S1: 1% of 10000 USD over (ask - SL).
    const s1 = floorToStep(dec(100).div(ask.minus(sl).mul(LOT)), dec('0.01'));
    // S2 reversed: sells at the bid with the Master's TP as its stop; 0.5% of 20000.
    const s2 = floorToStep(dec(100).div(tp.minus(bid).mul(LOT)), dec('0.01'));
    // S3 keeps EUR: the USD loss per lot converts at 1/EURUSD mid.
    const eurusd = broker.quote('EURUSD');
    const usdPerEur = eurusd.bid.plus(eurusd.ask).div(2);
    const s3 = floorToStep(dec(100).div(ask.minus(sl).mul(LOT).div(usdPerEur)), dec('0.01'));
    expect(volumes(g.slaves.map((s) => s.sim))).toEqual([[s1.toString()], [s2.toString()], [s3.toString()], ['3']]);
    expect(s1.toString()).toBe('0.19');
    expect(s3.toString()).toBe('0.24');
    // The reversed copy carries the stop it was sized to.
    expect(broker.positions(g.slaves[1]!.sim)[0]).toMatchObject({ side: 'sell', stopLoss: tp });
    for (const [i, s] of g.slaves.slice(0, 3).entries()) {
      const p = broker.positions(s.sim)[0]!;
      const perLot = p.openPrice
        .minus(p.stopLoss!)
        .abs()
        .mul(LOT)
        .div(i === 2 ? usdPerEur : 1);
      expect(p.volume.mul(perLot).lte(100), `slave ${i + 1} risks no more than its 100 budget`).toBe(true);
    }
  }, 30_000);

  it('no stop loss on the Master trade: the risk Slaves are skipped with no_stop_loss, the plain one copies', async () => {
    const g = await group();
    broker.placeOrder(g.masterSim, {
      symbol: 'GBPUSD',
      side: 'buy',
      type: 'market',
      volume: dec('1'),
      tag: newId('int'),
    });
    await engine().idle();
    expect(volumes(g.slaves.map((s) => s.sim))).toEqual([[], [], [], ['1']]);
    const [trade] = await engine().store.trades.listTrades(g.userId, { limit: 5 });
    const rows = await engine().store.trades.intentsOfTrade(trade!.id);
    const bySlave = new Map(rows.map((r) => [r.slaveAccountId, r]));
    for (const s of g.slaves.slice(0, 3)) {
      expect(bySlave.get(s.account.id)).toMatchObject({
        state: 'skipped',
        skipReason: expect.stringMatching(/^no_stop_loss: /),
      });
    }
    expect(bySlave.get(g.slaves[3]!.account.id)?.state).toBe('confirmed');
  }, 30_000);

  it('a pending order is sized from its price to its stop, and resized when the Master moves the stop', async () => {
    const g = await group();
    const id = broker.placeOrder(g.masterSim, {
      symbol: 'GBPUSD',
      side: 'buy',
      type: 'limit',
      volume: dec('1'),
      price: dec('1.26000'),
      stopLoss: dec('1.25500'),
      tag: newId('int'),
    }).order.id;
    await engine().idle();
    // 1% of 10000 over 50 pips = 0.2 lot.
    expect(broker.orders(g.slaves[0]!.sim).map((o) => o.volume.toString())).toEqual(['0.2']);
    broker.modifyOrder(g.masterSim, id, { stopLoss: dec('1.25000') });
    await engine().idle();
    // 100 pips now: 0.1 lot, and the new stop.
    expect(broker.orders(g.slaves[0]!.sim).map((o) => [o.volume.toString(), o.stopLoss?.toString()])).toEqual([
      ['0.1', '1.25'],
    ]);
    expect(broker.orders(g.slaves[3]!.sim).map((o) => o.volume.toString())).toEqual(['1']);
  }, 30_000);

  it("order route: sized from the Master order's stop loss the same way", async () => {
    const g = await group();
    const orders = new OrderService(engine().store, engine().adapters, engine().engine);
    const sl = dec('1.26000');
    const r = await orders.send(
      g.userId,
      g.master.id,
      {
        symbol: 'GBPUSD',
        side: 'buy',
        volume: dec('2'),
        type: 'market',
        price: null,
        stopLoss: sl,
        takeProfit: dec('1.29000'),
      },
      null,
    );
    await r.copies;
    await engine().idle();
    const { ask } = broker.quote('GBPUSD');
    expect(broker.positions(g.slaves[0]!.sim).map((p) => p.volume.toString())).toEqual([
      floorToStep(dec(100).div(ask.minus(sl).mul(LOT)), dec('0.01')).toString(),
    ]);
    expect(broker.positions(g.slaves[3]!.sim).map((p) => p.volume.toString())).toEqual(['2']);
  }, 30_000);
});
