import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { dec } from '../../src/domain/decimal.js';
import { OrderService } from '../../src/engine/order-service.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { seedGroup, startEngine, type EngineHarness } from '../engine/copy-harness.js';
import { PG_ADMIN_URL, requirePostgres, tempDatabase } from '../helpers/postgres.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const ready = await requirePostgres();

/**
 * PostgreSQL goes away between the Master's fill and the order's record (the relay in front of it is cut the moment
 * the broker answered). The order is at the broker, so the client must not be told "retry" (503): it gets 409
 * write_outcome_unknown with the trade id, and once the store is back the settle loop finds the order by its tag
 * and copies it to every Slave, once.
 */
describe.runIf(ready)('the store lost in the middle of an order', () => {
  let proxy: TcpProxy | null = null;
  let h: EngineHarness | null = null;
  let drop: () => Promise<void> = async () => undefined;
  afterAll(async () => {
    proxy?.restore();
    await h?.close();
    await proxy?.close();
    await drop();
  });

  it('answers write_outcome_unknown, and the trade is copied once the store is back', { timeout: 90_000 }, async () => {
    const db = await tempDatabase();
    drop = db.drop;
    const pg = new URL(PG_ADMIN_URL);
    const relay = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    proxy = relay;
    const url = new URL(db.url);
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    const broker = new SimBroker({ seed: 7 });
    broker.setPrice('EURUSD', '1.10000');
    const engine = await startEngine({ broker, databaseUrl: url.toString(), timeoutMs: 5_000 });
    h = engine;
    const g = await seedGroup(engine.store, broker, { slaves: [{ rule: {} }, { rule: {} }] });
    await engine.start();

    const master = await engine.adapters.forAccount(g.master);
    const place = master.placeOrder.bind(master);
    master.placeOrder = async (req) => {
      const outcome = await place(req);
      relay.cut();
      return outcome;
    };
    const orders = new OrderService(engine.store, engine.adapters, engine.engine);
    const err = await orders
      .send(
        g.userId,
        g.master.id,
        {
          symbol: 'EURUSD',
          side: 'buy',
          type: 'market',
          volume: dec('0.1'),
          price: null,
          stopLoss: null,
          takeProfit: null,
        },
        'req_outage',
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'write_outcome_unknown', details: { tradeId: expect.any(String) } });
    const tradeId = (err as AppError).details!.tradeId as string;
    expect(broker.positions(g.masterSim)).toHaveLength(1);

    relay.restore();
    master.placeOrder = place;
    // The settle loop (run by hand here, on its schedule in the service) finds the order by its tag and fans out.
    await expect
      .poll(
        async () => {
          await engine.settler.runOnce({ graceMs: 0 });
          await engine.idle();
          return g.slaves.filter((s) => broker.positions(s.sim).length === 1).length;
        },
        { timeout: 30_000 },
      )
      .toBe(g.slaves.length);
    const trade = await engine.store.trades.tradeById(tradeId);
    expect(trade?.status).toBe('accepted');
    expect(broker.positions(g.masterSim)).toHaveLength(1);
    for (const s of g.slaves) expect(broker.positions(s.sim)).toHaveLength(1);
  });
});
