import type { LinkKind, MasterItem, NewMasterItem } from '../../domain/ledger-types.js';
import { masterItemFromRow, masterItemToRow, type MasterItemRow } from '../ledger-mappers.js';

const keyOf = (kind: LinkKind, itemId: string) => `${kind}\u0000${itemId}`;

/** What a row gets from its column defaults when an insert leaves them out (schema.ts, `master_items`). */
const DEFAULTS = {
  price: null,
  stopLoss: null,
  takeProfit: null,
  tag: null,
  open: true,
  seq: 0,
  originTradeId: null,
  openedAt: null,
} as const;

/**
 * One account's items as held: the open ones whole, the closed ones by key only. A closed item's row is seldom
 * needed (a position seen again, a copy chain's origin) and is then read from the table; held whole, a Master's
 * whole history would stay in memory (about 0.85 KB an item).
 */
interface Held {
  open: Map<string, MasterItem>;
  closed: Set<string>;
}

/**
 * Every Master item of an account, kept in memory when this process is the store's only writer (the embedded
 * store), so a new Master position is known new without a read while its copy waits. An account is loaded whole
 * (an item absent from a loaded account is absent from the table) and then follows every committed write of
 * the table: the repositories call `upserted`, `insertedIfAbsent` or `forget` only after the write's commit,
 * and `failed` when a write threw (its account is dropped: reloaded on its next read, never guessed).
 */
export class MasterItemsCache {
  private readonly accounts = new Map<string, Held>();
  private readonly loading = new Map<string, Promise<Held>>();
  /** Bumped per account by every write to it: a load begun before a write ended must not fill the cache. */
  private readonly writes = new Map<string, number>();

  /** The account's items, read once (however many callers miss at once) by `readAll` when not held. */
  private held(accountId: string, readAll: () => Promise<MasterItem[]>): Promise<Held> {
    const held = this.accounts.get(accountId);
    if (held) return Promise.resolve(held);
    const pending = this.loading.get(accountId);
    if (pending) return pending;
    const generation = this.writes.get(accountId) ?? 0;
    const load = (async () => {
      const h: Held = { open: new Map(), closed: new Set() };
      for (const it of await readAll()) place(h, keyOf(it.kind, it.itemId), it);
      if ((this.writes.get(accountId) ?? 0) === generation) this.accounts.set(accountId, h);
      return h;
    })();
    this.loading.set(accountId, load);
    const done = () => {
      if (this.loading.get(accountId) === load) this.loading.delete(accountId);
    };
    load.then(done, done);
    return load;
  }

  async openItems(accountId: string, readAll: () => Promise<MasterItem[]>): Promise<MasterItem[]> {
    return [...(await this.held(accountId, readAll)).open.values()];
  }

  /** An open item from memory; a closed one through `readOne`; none without a read. */
  async item(
    accountId: string,
    kind: LinkKind,
    itemId: string,
    readAll: () => Promise<MasterItem[]>,
    readOne: () => Promise<MasterItem | null>,
  ): Promise<MasterItem | null> {
    const h = await this.held(accountId, readAll);
    const key = keyOf(kind, itemId);
    return h.open.get(key) ?? (h.closed.has(key) ? readOne() : null);
  }

  /**
   * A committed upsert (`on conflict do update` of every column it sets): the row as the table now holds it,
   * the columns left out kept from before, or their defaults for a new row.
   */
  upserted(it: NewMasterItem, at: Date): void {
    const h = this.wrote(it.accountId);
    if (!h) return;
    const key = keyOf(it.kind, it.itemId);
    const before = h.open.get(key);
    if (!before && h.closed.has(key)) {
      // Reopened: the columns it leaves out are the closed row's, not held; read the account again when asked.
      if (it.open === true) this.accounts.delete(it.accountId);
      return;
    }
    place(h, key, rowOf(before ?? DEFAULTS, it, at));
  }

  /** A committed `on conflict do nothing` insert: an item already there keeps its row. */
  insertedIfAbsent(it: NewMasterItem, at: Date): void {
    const h = this.wrote(it.accountId);
    if (!h) return;
    const key = keyOf(it.kind, it.itemId);
    if (!h.open.has(key) && !h.closed.has(key)) place(h, key, rowOf(DEFAULTS, it, at));
  }

  /** The account's items were deleted, or a write to them may or may not have happened: read again next time. */
  forget(accountId: string): void {
    this.wrote(accountId);
    this.accounts.delete(accountId);
  }

  /** A write to these accounts threw (rolled back, or its outcome unknown). */
  failed(accountIds: Iterable<string>): void {
    for (const id of accountIds) this.forget(id);
  }

  /** Marks a write to the account; its items, when held. */
  private wrote(accountId: string): Held | undefined {
    this.writes.set(accountId, (this.writes.get(accountId) ?? 0) + 1);
    this.loading.delete(accountId);
    return this.accounts.get(accountId);
  }
}

function place(h: Held, key: string, it: MasterItem): void {
  if (it.open) {
    h.open.set(key, it);
    h.closed.delete(key);
  } else {
    h.open.delete(key);
    h.closed.add(key);
  }
}

/**
 * The row after a write of `it` over `base`, through the same text mapping as the table (decimals as written,
 * read back as new Decimals): what a read of the row would give, `updated_at` aside (the database's clock).
 */
function rowOf(base: Partial<MasterItem>, it: NewMasterItem, at: Date): MasterItem {
  const set: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(masterItemToRow(it))) if (v !== undefined) set[k] = v;
  return masterItemFromRow({ ...masterItemToRow(base as NewMasterItem), ...set, updatedAt: at } as MasterItemRow);
}
