import { newId } from '../../src/domain/ids.js';
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
