import type { Account } from '../domain/account.js';
import type { Order, Position } from '../domain/types.js';
import type { BrokerAdapter } from '../platforms/adapter.js';
import type { Store } from '../store/store.js';
import { diffOrder, diffPosition, type MasterAction } from './actions.js';
import type { CopyEngine } from './copy-engine.js';
import { tagHolders } from './copy-loop.js';
import { closedInGap, type ClosedInGap } from './deal-replay.js';

/**
 * How far before the cursor the deals are read again: a deal the broker stamps a little before our clock's reading
 * (clocks apart, a deal booked late) is still in the next window. Replaying one twice is harmless: each action's
 * id is refused a second time, and a known position is skipped.
 */
export const CURSOR_OVERLAP_MS = 60_000;

/**
 * A Master's deal history since its cursor, turned into ledger rows for what no watch saw: a position opened and
 * closed while nobody watched (a crash, a failover, a stop) gets its open, partial closes and close recorded for
 * every Slave, skipped as `closed_before_copy` (there is nothing left to copy). What is still open, or was seen
 * open before, is the start diff's to copy. Returns the cursor to store once the caller's whole diff went through:
 * the time of this read (the next one reads from `CURSOR_OVERLAP_MS` before it).
 */
export async function replayDealsSince(
  store: Store,
  adapter: BrokerAdapter,
  engine: CopyEngine,
  master: Account,
  open: ReadonlySet<string>,
): Promise<Date | null> {
  if (!adapter.listDeals) return null;
  const readAt = engine.clock();
  const cursor = await store.masterCursors.dealsAt(master.id);
  // A Master never watched before starts its history now: what it did before it was a Master is not ours to copy.
  if (!cursor) return new Date(readAt);
  const since = cursor.getTime() - CURSOR_OVERLAP_MS;
  for (const gap of closedInGap(await adapter.listDeals(new Date(since)), since)) {
    if (open.has(gap.position.id)) continue;
    if (await store.trades.masterItem(master.id, 'position', gap.position.id)) continue;
    // Opened by our order route (its trade fans it out) or one of our own copies: not a Master trade to record here.
    const held = gap.position.tag ? await tagHolders(store, gap.position.tag) : null;
    if (held?.trade || held?.intent) continue;
    await recordGap(store, engine, master, gap);
  }
  if (adapter.capabilities.has.orderHistory !== false)
    for (const o of await adapter.listOrders({ includeHistory: true, from: new Date(since) }))
      if (await cancelledUnseen(store, master, o)) await recordCancelledOrder(engine, store, master, o);
  return new Date(readAt);
}

/**
 * A pending order placed and cancelled (or expired) while nobody watched: no deal shows it, the order history does.
 * A filled one is not here: the position it opened is in the deals.
 */
async function cancelledUnseen(store: Store, master: Account, o: Order): Promise<boolean> {
  if (o.type === 'market' || (o.status !== 'cancelled' && o.status !== 'rejected')) return false;
  if (await store.trades.masterItem(master.id, 'order', o.id)) return false;
  const held = o.tag ? await tagHolders(store, o.tag) : null;
  return !(held?.trade || held?.intent);
}

async function recordCancelledOrder(engine: CopyEngine, store: Store, master: Account, o: Order): Promise<void> {
  const skip = `closed_before_copy: the Master placed pending order ${o.id} at ${o.createdAt} and it was ${o.status} at ${o.updatedAt} while no watch was running`;
  const copy = (actions: MasterAction[]) => copyAll(engine, master, actions, skip);
  await copy(diffOrder(master.id, null, { ...o, status: 'pending' }, null, Date.parse(o.createdAt)));
  const known = await store.trades.masterItem(master.id, 'order', o.id);
  if (known?.open) await copy(diffOrder(master.id, known, null, o, Date.parse(o.updatedAt)));
}

async function copyAll(engine: CopyEngine, master: Account, actions: MasterAction[], skipEvery: string): Promise<void> {
  for (const a of actions) await (await engine.copy(master, a, { source: 'watcher', catchUp: true, skipEvery })).done;
}

async function recordGap(store: Store, engine: CopyEngine, master: Account, gap: ClosedInGap): Promise<void> {
  const p = gap.position;
  const last = gap.steps.at(-1)!;
  const skip = `closed_before_copy: the Master opened position ${p.id} at ${p.openedAt} and closed it at ${last.at} while no watch was running`;
  const copy = (actions: MasterAction[]) => copyAll(engine, master, actions, skip);
  await copy(diffPosition(master.id, null, p, Date.parse(p.openedAt)));
  for (const step of gap.steps) {
    const known = await store.trades.masterItem(master.id, 'position', p.id);
    if (!known?.open) return;
    const now: Position | null = step.volume.lte(0) ? null : { ...p, volume: step.volume, currentPrice: step.price };
    await copy(diffPosition(master.id, known, now, Date.parse(step.at), step.price));
  }
}
