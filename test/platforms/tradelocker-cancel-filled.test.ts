import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import { executeOp, type IntentOp } from '../../src/engine/intent-ops.js';
import type { BrokerAdapter } from '../../src/platforms/adapter.js';
import { TradeLockerAdapter } from '../../src/platforms/tradelocker/adapter.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { startTradeLockerSimServer, type TradeLockerSimServer } from '../../src/simulator/tradelocker/server.js';

/**
 * A cancel that loses the race to a fill: the TradeLocker server refuses it inside a 2xx (s:"error"), the adapter
 * reads the order back and reports the fill, and the engine's follow-the-fill step links the Slave's position.
 */
const META = { email: 'race@example.com', password: 'pw', server: 'RACE', environment: 'demo' };

describe('TradeLocker: cancelling an order that has just filled', () => {
  let broker: SimBroker;
  let srv: TradeLockerSimServer;
  let adapter: TradeLockerAdapter;
  let simId: string;

  const buyStop = (tag: string, price = '1.0810') =>
    broker.placeOrder(simId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'stop',
      volume: dec('0.02'),
      price: dec(price),
      tag,
    }).order.id;
  const trigger = () => broker.setPrice('EURUSD', '1.0820');

  beforeAll(async () => {
    broker = new SimBroker({ seed: 11 });
    const acc = broker.createAccount({ balance: 10_000, meta: META });
    simId = acc.id;
    srv = await startTradeLockerSimServer(broker, { environment: 'demo' });
    adapter = new TradeLockerAdapter({
      baseUrl: srv.baseUrl,
      ...META,
      accountId: acc.login,
      accNum: 1,
      timeoutMs: 2000,
    });
  });
  afterAll(async () => {
    await adapter.close();
    await srv.close();
  });

  it('the adapter reports order_filled with the position, order_not_found for a cancelled or unknown order', async () => {
    broker.setPrice('EURUSD', '1.0800');
    const filled = buyStop('cf-1');
    trigger();
    const position = broker.order(simId, filled)!.positionId;
    expect(position).toBeTruthy();
    const outcome = await adapter.cancelOrder(filled);
    expect(outcome).toMatchObject({
      kind: 'rejected',
      code: 'order_filled',
      raw: { orderId: filled, positionId: position },
    });
    expect(broker.positions(simId).some((p) => p.id === position)).toBe(true);

    broker.setPrice('EURUSD', '1.0800');
    const pending = buyStop('cf-2');
    expect(await adapter.cancelOrder(pending)).toMatchObject({ kind: 'confirmed', brokerOrderId: pending });
    expect(await adapter.cancelOrder(pending)).toMatchObject({ kind: 'rejected', code: 'order_not_found' });
    expect(await adapter.cancelOrder('7300000000000009999')).toMatchObject({
      kind: 'rejected',
      code: 'order_not_found',
    });
  });

  it("the engine's fill step, finding the Slave's copy pending, cancels it, sees the fill instead and links it", async () => {
    broker.setPrice('EURUSD', '1.0800');
    const copy = buyStop('cf-3');
    // The copy fills between the engine's look-up (pending) and its cancel.
    const racing: BrokerAdapter = Object.create(adapter, {
      findByTag: {
        value: async (tag: string) => {
          const seen = await adapter.findByTag(tag);
          if (seen.order?.status === 'pending') trigger();
          return seen;
        },
      },
    });
    const op: IntentOp = {
      kind: 'fill',
      orderId: copy,
      origTag: 'cf-3',
      req: {
        symbol: 'EURUSD',
        side: 'buy',
        type: 'market',
        volume: dec('0.02'),
        stopLoss: null,
        takeProfit: null,
        tag: 'cf-3f',
      },
      masterPositionId: 'mp-1',
      fresh: true,
    };
    const outcome = await executeOp(racing, op, (fn) => fn());
    const position = broker.order(simId, copy)!.positionId;
    expect(outcome).toMatchObject({ kind: 'confirmed', positionId: position, raw: 'observed' });
    // Followed, not replaced: no market order was placed on top of the fill.
    expect(broker.findByTag(simId, 'cf-3f')).toEqual({});
  });
});
