import type { Account } from '../domain/account.js';
import type { NewEvent } from '../store/repos/events.js';
import type { Store } from '../store/store.js';
import type { GroupSlave } from '../store/repos/group-slaves-cache.js';
import type { MasterAction } from './actions.js';
import { actionEvents, type IntentFields } from './action-events.js';
import { builtAdapter, type AdapterRegistry } from './adapter-registry.js';
import type { Slave } from './plan-inputs.js';

/** The Slaves of a Master's group, each with its copy rule and adapter (null when it cannot be opened now). */
export async function groupSlaves(store: Store, adapters: AdapterRegistry, master: Account): Promise<Slave[]> {
  if (!master.groupId) return [];
  return withAdapters(adapters, await store.accounts.slavesOfGroup(master.userId, master.groupId));
}

/** Each Slave with its adapter (null when it cannot be opened now). */
export async function withAdapters(adapters: AdapterRegistry, slaves: readonly GroupSlave[]): Promise<Slave[]> {
  // Always through forAccount: its resolver hands out a shadowed Slave's simulated twin. Awaited only when it is
  // not built yet: a fan-out to 1000 Slaves asks 1000 times, for adapters mostly built long before.
  const out: Slave[] = [];
  const waits: Array<Promise<void>> = [];
  for (const { account, rule } of slaves) {
    const pending = adapters.forAccount(account);
    const slave: Slave = { account, rule, adapter: builtAdapter(pending) ?? null };
    out.push(slave);
    if (!slave.adapter)
      waits.push(
        pending.then(
          (adapter) => {
            slave.adapter = adapter;
          },
          () => undefined,
        ),
      );
  }
  if (waits.length > 0) await Promise.all(waits);
  return out;
}

/** The events of an order-route fan-out: the trade as the route recorded it, before the Master's outcome is known. */
export function orderRouteEvents(
  master: Account,
  action: MasterAction,
  tradeId: string,
  rows: IntentFields[],
): NewEvent[] {
  return actionEvents(
    {
      id: tradeId,
      userId: master.userId,
      masterAccountId: master.id,
      source: 'api',
      action: action.kind,
      symbol: action.symbol,
      side: action.side,
      volume: action.volume,
      masterPositionId: null,
      fillPrice: null,
      stopLoss: null,
      takeProfit: null,
      masterOutcome: null,
    },
    rows,
  );
}
