import { afterEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/account.js';
import { withDefaults } from '../../src/domain/copy-rule.js';
import { Decimal } from '../../src/domain/decimal.js';
import { writeGateOpen } from '../../src/domain/write-gate.js';
import type { MasterAction } from '../../src/engine/actions.js';
import { AdapterRegistry } from '../../src/engine/adapter-registry.js';
import { CopyEngine } from '../../src/engine/copy-engine.js';
import { Dispatcher } from '../../src/engine/dispatcher.js';
import { Store } from '../../src/store/store.js';
import { stubBroker } from '../helpers/stub-broker.js';

function open(master: Account, positionId: string): MasterAction {
  return {
    id: `${master.id}:${positionId}:open:1`,
    kind: 'open',
    masterAccountId: master.id,
    positionId,
    orderId: null,
    symbol: 'EURUSD',
    side: 'buy',
    type: 'market',
    volume: new Decimal('1'),
    prevVolume: null,
    price: new Decimal('1.1'),
    stopLoss: null,
    takeProfit: null,
    at: Date.now(),
    item: {
      accountId: master.id,
      kind: 'position',
      itemId: positionId,
      symbol: 'EURUSD',
      side: 'buy',
      orderType: 'market',
      volume: new Decimal('1'),
      price: new Decimal('1.1'),
    },
  };
}

describe('the write gate is opened only for a worker under leases', () => {
  let store: Store | null = null;
  afterEach(async () => {
    await store?.close();
    store = null;
  });

  it('unfenced (one process), a copy is handed to the broker outside any gate; fenced, every write passes one', async () => {
    store = await Store.open({ dataDir: ':memory:', embeddedFsync: false });
    const user = await store.users.create('gate@example.test', 'x');
    const group = await store.accounts.createGroup(user.id, 'g');
    const account = (role: 'master' | 'slave', i: number) =>
      store!.accounts.create({
        userId: user.id,
        platform: 'sim',
        role,
        name: `${role}${i}`,
        groupId: group.id,
        brokerAccountId: `${role}${i}`,
        brokerAccountNumber: String(100 + i),
        balance: new Decimal(10000),
        equity: new Decimal(10000),
      });
    const master = await account('master', 0);
    for (let i = 1; i <= 3; i++) await store.accounts.setRule((await account('slave', i)).id, withDefaults({}));

    const seen: boolean[] = [];
    const adapters = new AdapterRegistry({ open: async () => null });
    adapters.register(stubBroker(() => seen.push(writeGateOpen())));
    const unfenced = new CopyEngine(store, adapters, new Dispatcher());
    await (await unfenced.copy(master, open(master, 'p1'), { source: 'watcher' })).done;
    expect(seen).toEqual([false, false, false]);

    seen.length = 0;
    const fenced = new CopyEngine(store, adapters, new Dispatcher(), { mayWrite: () => true });
    await (await fenced.copy(master, open(master, 'p2'), { source: 'watcher' })).done;
    expect(seen).toEqual([true, true, true]);
  });
});
