import type { Account } from '../../domain/account.js';
import { levelsOf, type Levels, type SloRow } from '../../domain/slo/levels.js';
import type { Store } from '../../store/store.js';

export interface SlaveLevels {
  accountId: string;
  name: string;
  levels: Levels;
}

export interface GroupLevels {
  groupId: string;
  from: Date;
  to: Date;
  /** Every Slave's rows together. */
  group: Levels;
  slaves: SlaveLevels[];
}

/** The Slaves of a group the caller owns (removed ones are not listed by the store), oldest first. */
export async function slavesOf(store: Store, userId: string, groupId: string): Promise<Account[]> {
  return (await store.accounts.slavesOfGroup(userId, groupId)).map((s) => s.account);
}

/** The levels of each Slave and of the whole group over [from, to), from one read of the ledger. */
export async function groupLevels(
  store: Store,
  groupId: string,
  slaves: readonly Account[],
  from: Date,
  to: Date,
): Promise<GroupLevels> {
  const rows = await store.slo.ledgerRows(
    slaves.map((s) => s.id),
    from,
    to,
  );
  const bySlave = new Map<string, SloRow[]>();
  for (const r of rows) {
    let list = bySlave.get(r.slaveAccountId);
    if (!list) bySlave.set(r.slaveAccountId, (list = []));
    list.push(r);
  }
  return {
    groupId,
    from,
    to,
    group: levelsOf(rows),
    slaves: slaves.map((s) => ({ accountId: s.id, name: s.name, levels: levelsOf(bySlave.get(s.id) ?? []) })),
  };
}
