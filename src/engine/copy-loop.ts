import type { Account } from '../domain/account.js';
import type { CopyIntent, Trade } from '../domain/ledger-types.js';
import type { Store } from '../store/store.js';
import { mayBeOurTag } from '../domain/correlation.js';
import type { Order, Position } from '../domain/types.js';
import { orderItem, positionItem } from './actions.js';

export interface OwnCopy {
  intentId: string;
  tradeId: string;
  groupId: string | null;
}

/** The trade and the copy intent that carry a tag now (its current tag; earlier attempts' tags are not read). */
export interface TagHolders {
  trade: Trade | null;
  intent: CopyIntent | null;
}

/** Both read at once: a new tagged Master item needs both before its copy can be planned. */
export async function tagHolders(store: Store, tag: string): Promise<TagHolders> {
  if (!mayBeOurTag(tag)) return { trade: null, intent: null };
  const [trade, intent] = await Promise.all([store.trades.tradeByTag(tag), store.trades.intentByTag(tag)]);
  return { trade, intent };
}

/** Deeper chains than this are not followed (a chain of groups longer than this is refused at assignment). */
const MAX_HOPS = 16;

/**
 * Whether a tagged Master position or order is one of our own copies made from this Master: its tag is a copy
 * intent's (current or earlier attempt) whose trade came from this Master, its group, or the same broker
 * account connected elsewhere; or, up the chain, the Master position that trade copied was itself such a
 * copy. Copying it would feed the group on itself. A copy made from another group whose provenance never
 * passes through this Master is a chained copy, and is copied.
 */
export async function ownCopyOf(
  store: Store,
  master: Account,
  tag: string | null,
  /** What carries `tag` now, when the caller has read it already. */
  tagged?: TagHolders,
): Promise<OwnCopy | null> {
  let first: OwnCopy | null = null;
  let current = tag;
  for (let hop = 0; current && hop < MAX_HOPS; hop++) {
    // Another tool's tag: no trade or intent of ours carries it, nor ever did (see mayBeOurTag).
    if (!mayBeOurTag(current)) return null;
    // A trade's own tag (an order sent through our API) is where provenance starts; and it spares the
    // unindexed search of earlier attempts' tags.
    const known = hop === 0 ? tagged : undefined;
    if (known ? known.trade : await store.trades.tradeByTag(current)) return null;
    const intent = known
      ? (known.intent ?? (await store.trades.intentByEarlierTag(current)))
      : await store.trades.intentByAnyTag(current);
    if (!intent) return null;
    const trade = await store.trades.tradeById(intent.tradeId);
    if (!trade) return null;
    first ??= { intentId: intent.id, tradeId: trade.id, groupId: trade.groupId };
    if (trade.masterAccountId === master.id || (master.groupId !== null && trade.groupId === master.groupId))
      return first;
    const source = await store.accounts.byId(trade.masterAccountId);
    if (source && master.brokerIdentity !== null && source.brokerIdentity === master.brokerIdentity) return first;
    const item =
      (trade.masterPositionId
        ? await store.trades.masterItem(trade.masterAccountId, 'position', trade.masterPositionId)
        : null) ??
      (trade.masterOrderId ? await store.trades.masterItem(trade.masterAccountId, 'order', trade.masterOrderId) : null);
    current = item?.tag ?? null;
  }
  return null;
}

/**
 * A new Master item carrying the tag of one of our copies made from this Master's group (the same broker account
 * connected twice, or a cycle of groups): copying it would feed on itself. It is remembered as a closed item, so
 * neither the watcher nor the reconciler ever copies it or what happens to it. False when it is not such a copy.
 */
export async function ignoreOwnCopy(
  store: Store,
  master: Account,
  kind: 'position' | 'order',
  it: Position | Order,
  tagged: TagHolders | undefined,
  log: (msg: string, err: unknown) => void,
): Promise<boolean> {
  if (!it.tag) return false;
  const own = await ownCopyOf(store, master, it.tag, tagged);
  if (!own) return false;
  await store.trades.upsertMasterItem(
    kind === 'position'
      ? positionItem(master.id, it as Position, 0, false, null)
      : orderItem(master.id, it as Order, 0, false, null),
  );
  await store.events.emit([
    {
      userId: master.userId,
      accountId: master.id,
      type: 'copy.loop_ignored',
      payload: { kind, itemId: it.id, tag: it.tag, ...own },
    },
  ]);
  log(`master ${master.id} ${kind} ${it.id} carries the tag of our copy ${own.intentId}: not copied (copy loop)`, null);
  return true;
}
