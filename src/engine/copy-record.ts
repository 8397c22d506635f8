import type { Account } from '../domain/account.js';
import type { Decimal } from '../domain/decimal.js';
import type { NewEvent } from '../store/repos/events.js';
import type { HeldGroupSlaves } from '../store/repos/group-slaves-read.js';
import type { Store } from '../store/store.js';
import { actionEvents } from './action-events.js';
import type { MasterAction } from './actions.js';
import type { CopyOptions } from './copy-options.js';
import { orderRouteEvents } from './group-slaves.js';
import { actionTrade, fanoutTradeSet } from './ledger.js';
import type { Planned } from './plan-inputs.js';
import type { WorkClaims } from './work-claims.js';

export interface PlanToRecord {
  master: Account;
  action: MasterAction;
  opts: CopyOptions;
  tradeId: string;
  planned: Planned[];
  sends: number;
  refPrice: Decimal | null;
  recent: HeldGroupSlaves | null;
}

/**
 * Records a plan's rows with their trade in one transaction. Null when another pass recorded this trade or action
 * already (nothing to send). Else the events deferred to the first outcome batch, when the trade's move to accepted
 * waits for its sends (null when they went in with the rows).
 */
export async function recordPlan(
  store: Store,
  p: PlanToRecord,
  claims: WorkClaims,
): Promise<{ deferred: NewEvent[] | null } | null> {
  return p.opts.tradeId ? recordOrderRoute(store, p) : recordAction(store, p, claims);
}

/** The order route: its trade exists (recorded before the Master broker was called); its intents go in now. */
async function recordOrderRoute(store: Store, p: PlanToRecord): Promise<{ deferred: null } | null> {
  const { master, action, opts, tradeId } = p;
  const rows = p.planned.map((x) => x.row);
  const events = [...(opts.events?.(p.sends) ?? []), ...orderRouteEvents(master, action, tradeId, rows)];
  const recorded = await store.trades.recordIntents(
    tradeId,
    fanoutTradeSet(action, p.sends, p.refPrice, opts.masterOutcome),
    rows,
    events,
    action.item.itemId ? [action.item] : [],
  );
  // Another pass (the route, or the settle loop after a crash) fanned this trade out already.
  return recorded ? { deferred: null } : null;
}

/**
 * An action seen at the Master: the trade with its rows, guarded when planned on the group as held. While it has
 * sends, it is recorded and stays so (claimed as accept-pending) until the first outcome batch moves it to accepted.
 */
async function recordAction(
  store: Store,
  p: PlanToRecord,
  claims: WorkClaims,
): Promise<{ deferred: NewEvent[] | null } | null> {
  const { master, action, opts, tradeId, recent } = p;
  const rows = p.planned.map((x) => x.row);
  const trade = actionTrade(master, action, tradeId, opts, p.sends, p.refPrice);
  const events = actionEvents(trade, rows);
  if (p.sends > 0) claims.acceptPending(tradeId);
  const recorded = await store.trades
    .recordAction(
      trade,
      rows,
      opts.source === 'reconciler' ? [] : [action.item],
      p.sends > 0 ? [] : events,
      recent ? { groupId: master.groupId!, settled: recent.settled } : undefined,
    )
    .catch((err: unknown) => {
      claims.acceptWritten(tradeId);
      throw err;
    });
  if (!recorded) {
    claims.acceptWritten(tradeId);
    return null;
  }
  return { deferred: p.sends > 0 ? events : null };
}
