import type { Account } from '../domain/account.js';
import type { NewEvent } from '../store/repos/events.js';
import type { Store } from '../store/store.js';
import type { MasterAction } from './actions.js';
import { actionEvents, type IntentFields } from './action-events.js';
import type { AdapterRegistry } from './adapter-registry.js';
import type { Slave } from './plan-inputs.js';

/** The Slaves of a Master's group, each with its copy rule and adapter (null when it cannot be opened now). */
export async function groupSlaves(store: Store, adapters: AdapterRegistry, master: Account): Promise<Slave[]> {
  if (!master.groupId) return [];
  const slaves = await store.accounts.slavesOfGroup(master.userId, master.groupId);
  // Always through forAccount: its resolver hands out a shadowed Slave's simulated twin.
  return Promise.all(
    slaves.map(async ({ account, rule }) => ({
      account,
      rule,
      adapter: await adapters.forAccount(account).catch(() => null),
    })),
  );
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
