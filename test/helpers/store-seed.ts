import { dec } from '../../src/domain/decimal.js';
import { newId } from '../../src/domain/ids.js';
import type { NewIntent, NewTrade } from '../../src/domain/ledger-types.js';
import type { Account } from '../../src/domain/account.js';
import type { Store } from '../../src/store/store.js';

/**
 * A new user with one sim Master and `slaves` sim Slaves in `store`. `key` prefixes their broker ids, which must be
 * unique in a store (an account is connected once), so each case that shares a store passes its own.
 */
export async function seedAccounts(
  store: Store,
  key: string,
  slaves: number,
): Promise<{ userId: string; master: Account; slaves: Account[] }> {
  const u = await store.users.create(`${newId('usr')}@example.test`, 'x');
  const acc = (role: 'master' | 'slave', n: number) =>
    store.accounts.create({
      userId: u.id,
      platform: 'sim',
      role,
      name: `${key}${n}`,
      brokerAccountId: `${key}${n}`,
      brokerAccountNumber: String(n),
    });
  const master = await acc('master', 0);
  const list: Account[] = [];
  for (let i = 1; i <= slaves; i++) list.push(await acc('slave', i));
  return { userId: u.id, master, slaves: list };
}

/** A trade row as the watcher records one (a market buy of EURUSD); `over` sets what a case is about. */
export const tradeRow = (userId: string, masterAccountId: string, over: Partial<NewTrade> = {}): NewTrade => ({
  id: newId('trd'),
  userId,
  masterAccountId,
  source: 'watcher',
  action: 'open',
  symbol: 'EURUSD',
  side: 'buy',
  orderType: 'market',
  volume: dec('0.1'),
  tag: newId('act'),
  status: 'recorded',
  ...over,
});

/** A planned intent of `tradeId` for one Slave, matching tradeRow's action; `over` sets the rest. */
export const intentRow = (tradeId: string, slaveAccountId: string, over: Partial<NewIntent> = {}): NewIntent => ({
  id: newId('int'),
  tradeId,
  slaveAccountId,
  tag: newId('act'),
  action: 'open',
  symbol: 'EURUSD',
  side: 'buy',
  plannedVolume: dec('0.1'),
  state: 'planned',
  ...over,
});
