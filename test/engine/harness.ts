import { dec } from '../../src/domain/decimal.js';
import type { Account } from '../../src/domain/account.js';
import { newId } from '../../src/domain/ids.js';
import { AdapterRegistry } from '../../src/engine/adapter-registry.js';
import { Dispatcher } from '../../src/engine/dispatcher.js';
import { createSimAdapterFactory } from '../../src/platforms/sim/factory.js';
import { SimBroker } from '../../src/simulator/broker.js';
import { Store } from '../../src/store/store.js';

/** A store, the in-process simulated broker and a registry over it: the engine without HTTP. */
export interface EngineHarness {
  store: Store;
  broker: SimBroker;
  adapters: AdapterRegistry;
  dispatcher: Dispatcher;
  userId: string;
  /** A sim account at the broker plus its stored record. */
  account(o?: { role?: 'master' | 'slave'; groupId?: string | null; balance?: number }): Promise<Account>;
  open(a: Account, n: number, symbol?: string, volume?: string): string[];
  close(): Promise<void>;
}

export async function engineHarness(
  o: { store?: Store; broker?: SimBroker; userId?: string; timeoutMs?: number } = {},
): Promise<EngineHarness> {
  const store = o.store ?? (await Store.open({ dataDir: ':memory:', embeddedFsync: false }));
  const broker = o.broker ?? new SimBroker();
  const adapters = new AdapterRegistry({ open: async () => null });
  adapters.register(createSimAdapterFactory(broker, { timeoutMs: o.timeoutMs ?? 1000 }));
  const userId = o.userId ?? (await store.users.create(`${newId('usr')}@example.test`, 'h')).id;
  return {
    store,
    broker,
    adapters,
    dispatcher: new Dispatcher(),
    userId,
    async account(a = {}) {
      const balance = a.balance ?? 10_000;
      const sim = broker.createAccount({ balance, currency: 'USD', hedging: true, leverage: 100 });
      return store.accounts.create({
        userId,
        platform: 'sim',
        role: a.role ?? 'slave',
        name: `sim ${sim.login}`,
        groupId: a.groupId ?? null,
        brokerAccountId: sim.id,
        brokerAccountNumber: sim.login,
        currency: 'USD',
        balance: dec(balance),
        equity: dec(balance),
      });
    },
    open(a, n, symbol = 'EURUSD', volume = '0.1') {
      return Array.from(
        { length: n },
        (_, i) =>
          broker.placeOrder(a.brokerAccountId, {
            symbol,
            side: i % 2 ? 'sell' : 'buy',
            type: 'market',
            volume: dec(volume),
            tag: newId('int'),
          }).position!.id,
      );
    },
    async close() {
      await adapters.closeAll();
      if (!o.store) await store.close();
    },
  };
}
