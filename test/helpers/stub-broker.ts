import { Decimal } from '../../src/domain/decimal.js';
import type { InstrumentSpec } from '../../src/domain/types.js';
import type { AdapterFactory, BrokerAdapter, PlaceOrderRequest } from '../../src/platforms/adapter.js';
import { SIM_CAPABILITIES } from '../../src/platforms/sim/capabilities.js';

export const STUB_SPEC: InstrumentSpec = {
  symbol: 'EURUSD',
  volumeStep: new Decimal('0.01'),
  minVolume: new Decimal('0.01'),
  maxVolume: new Decimal('100'),
  contractSize: new Decimal(100000),
  tickSize: new Decimal('0.00001'),
};

/**
 * A `sim` broker that confirms every order in full at 1.1 and refuses everything else, for measuring or watching
 * what the engine hands a broker, not the broker. `onPlace` is told each order as it is handed over. The answer
 * comes on the next turn of the event loop, as a real broker's does (I/O), never inside the microtasks that hand
 * out the other sends of a fan-out.
 */
export function stubBroker(onPlace: (req: PlaceOrderRequest) => void): AdapterFactory {
  const caps = { ...SIM_CAPABILITIES, rateLimitPerSecond: 1_000_000 };
  let n = 0;
  const adapter = (): BrokerAdapter => ({
    capabilities: caps,
    accountInfo: async () => ({
      balance: new Decimal(10000),
      equity: new Decimal(10000),
      currency: 'USD',
      brokerAccountNumber: '1',
    }),
    instrument: async () => STUB_SPEC,
    listPositions: async () => [],
    listOrders: async () => [],
    placeOrder: async (req) => {
      onPlace(req);
      await new Promise((r) => setImmediate(r));
      return {
        kind: 'confirmed',
        brokerOrderId: `o${++n}`,
        positionId: `p${req.tag}`,
        filledVolume: req.volume,
        fillPrice: new Decimal('1.1'),
        brokerTime: null,
      };
    },
    modifyPosition: async () => ({ kind: 'denied', code: 'x', message: 'x' }),
    closePosition: async () => ({ kind: 'denied', code: 'x', message: 'x' }),
    cancelOrder: async () => ({ kind: 'denied', code: 'x', message: 'x' }),
    findByTag: async () => ({ found: false }),
    close: async () => undefined,
  });
  return { platform: 'sim', capabilities: caps, create: async () => adapter() };
}
