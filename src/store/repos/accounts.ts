import { and, asc, eq, gt, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import {
  accounts,
  copierGroups,
  copyRules,
  equitySnapshots,
  masterItems,
  positionLinks,
  riskLimits,
  shadowTwins,
} from '../schema.js';
import { newId } from '../../domain/ids.js';
import type { Decimal } from '../../domain/decimal.js';
import { initialHealth, type Account, type CopierGroup } from '../../domain/account.js';
import type { AccountStatus, Health, Platform, Role } from '../../domain/types.js';
import { withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import { brokerIdentity } from '../../domain/broker-identity.js';
import { AppError } from '../../domain/errors.js';
import type { MasterItemsCache } from './master-items-cache.js';
import type { GroupSlave } from './group-slaves-cache.js';
import { GroupSlavesReader, type HeldGroupSlaves } from './group-slaves-read.js';
import { live, toAccount } from './account-row.js';
import { type Keyed, LIST_CHUNK, readAccountList, readAccountPage } from './account-list-read.js';

export interface NewAccount {
  userId: string;
  platform: Platform;
  role: Role;
  name: string;
  groupId?: string | null;
  brokerAccountId: string;
  brokerAccountNumber: string;
  brokerName?: string | null;
  environment?: string | null;
  currency?: string | null;
  credentialsEnc?: string | null;
  balance?: Decimal | null;
  equity?: Decimal | null;
  /** Required for platform A (its server is not a column); derived from the other fields elsewhere. */
  brokerIdentity?: string;
}

/** The identity a new row gets: given, or derived from the columns that hold it for sim, B and C. */
export function identityOf(
  a: Pick<NewAccount, 'platform' | 'environment' | 'brokerName' | 'brokerAccountId' | 'brokerIdentity'>,
): string {
  if (a.brokerIdentity) return a.brokerIdentity;
  if (a.platform === 'platforma') throw new Error('a platform A account needs its broker identity (server + login)');
  return brokerIdentity({
    platform: a.platform,
    environment: a.environment ?? null,
    server: a.brokerName ?? null,
    accountId: a.brokerAccountId,
  });
}

/** The unique index on broker_identity refused the row: a second connection of a connected broker account. */
export function isDuplicateIdentity(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const x = e as { code?: unknown; constraint?: unknown; message?: unknown };
    // accounts_broker_uq (per user, older) can only fire for a row of the same broker account too.
    if (
      x.code === '23505' &&
      /accounts_broker(_identity)?_uq/.test(`${String(x.constraint ?? '')} ${String(x.message ?? '')}`)
    )
      return true;
  }
  return false;
}

export const alreadyConnected = (detail?: string) =>
  new AppError(
    'account_already_connected',
    `this broker account is already connected${detail ? ` ${detail}` : ''}; a broker account can be connected once in this deployment`,
  );

/** One account's health read: its health, and its balance and equity when the read got them. */
export interface HealthWrite {
  id: string;
  health: Health;
  funds: { balance: Decimal; equity: Decimal } | null;
}

export interface GroupView extends CopierGroup {
  master: Account | null;
  slaves: Array<Account & { rule: CopyRule }>;
}

/**
 * Accounts, copier groups and copy rules. Every read that takes an id also takes the owner, so a foreign id
 * behaves exactly like an unknown one (same null -> same 404).
 */
export class AccountsRepo {
  /**
   * Per-user account lists, kept only when this process is the store's only writer (the embedded store is
   * single-process by construction). A write of status, health or funds replaces the account in its cached list
   * (a new object: readers holding the old one keep a consistent snapshot); any other write clears the cache, so
   * reads never see stale rows.
   */
  private readonly cache: Map<string, Account[]> | null;
  /** Where each cached account sits: its user's list and its index there. */
  private readonly slots = new Map<string, { list: Account[]; i: number }>();
  private readonly loading = new Map<string, Promise<Account[]>>();
  private credentialReads = new Map<
    string,
    Array<{ resolve: (c: string | null) => void; reject: (err: unknown) => void }>
  >();
  /**
   * Fields written (`patch`) while a list was being read, of accounts no held list has yet: the read may have
   * fetched the row before the write, so the list takes them when it is kept. Only while a read is under way.
   */
  private readonly unplaced = new Map<string, Partial<Account>>();
  /** Bumped by every clear: a read begun before it must not fill the cache. */
  private generation = 0;

  /** The Master items the trades repository keeps in memory (same condition): a removal deletes an account's. */
  private readonly items: MasterItemsCache | null;

  /** Copy rules by Slave (null = none stored), under the same single-writer condition as `cache`. */
  private readonly rules: Map<string, CopyRule | null> | null;

  /** The other condition: groups' Slaves as last read, each answer checked against the store (`slavesOfGroup`). */
  private readonly groupSlaves: GroupSlavesReader | null;

  constructor(
    private readonly db: Db,
    opts: { cache?: boolean; items?: MasterItemsCache | null } = {},
  ) {
    this.items = opts.items ?? null;
    this.cache = opts.cache ? new Map() : null;
    this.rules = opts.cache ? new Map() : null;
    this.groupSlaves = opts.cache ? null : new GroupSlavesReader(db);
  }

  private invalidate(): void {
    this.cache?.clear();
    this.slots.clear();
    this.loading.clear();
    this.unplaced.clear();
    this.generation++;
  }

  /**
   * One read of a user's list however many callers miss the cache at once (at start every Master's watch asks
   * for its Slaves together); cached only when no write cleared the cache while it was read.
   *
   * Read a chunk of LIST_CHUNK accounts per statement (in id order, then sorted into the list's order here), not
   * in one: the embedded store runs one statement at a time, and the whole list of 10,000 accounts in one took
   * 0.25-0.6 s, during which every other statement (a page of the list, a copy's record) waited. Chunks of one
   * snapshot only when nothing was written meanwhile; this process being the store's only writer (see `cache`),
   * an unchanged generation says so. Otherwise the list is read again in one statement, and not cached. Status,
   * health and funds written meanwhile do not clear the cache (a health round writes all the time): they are
   * applied to the list as it is kept (`unplaced`), so a row fetched before such a write is not kept stale.
   */
  private load(userId: string): Promise<Account[]> {
    const pending = this.loading.get(userId);
    if (pending) return pending;
    const generation = this.generation;
    const read = (async () => {
      const where = and(eq(accounts.userId, userId), live)!;
      const got: Keyed[] = [];
      for (let after: string | undefined; ; ) {
        const chunk = await readAccountPage(this.db, where, after, LIST_CHUNK);
        for (const k of chunk) got.push(k);
        if (chunk.length < LIST_CHUNK) break;
        after = chunk[chunk.length - 1]!.account.id;
      }
      if (generation !== this.generation || !this.cache) return readAccountList(this.db, where);
      got.sort(inListOrder);
      const all = got.map((k) => {
        const written = this.unplaced.get(k.account.id);
        return written ? { ...k.account, ...written } : k.account;
      });
      this.cache.set(userId, all);
      for (const [i, a] of all.entries()) this.slots.set(a.id, { list: all, i });
      return all;
    })();
    this.loading.set(userId, read);
    const done = () => {
      if (this.loading.get(userId) === read) this.loading.delete(userId);
      if (this.loading.size === 0) this.unplaced.clear();
    };
    read.then(done, done);
    return read;
  }

  /** The cached account with these fields changed, as a new object in the same place of its list. */
  private patch(id: string, fields: Partial<Account>): void {
    const slot = this.slots.get(id);
    if (slot) slot.list[slot.i] = { ...slot.list[slot.i]!, ...fields };
    else if (this.loading.size > 0) this.unplaced.set(id, { ...this.unplaced.get(id), ...fields });
  }

  async create(a: NewAccount): Promise<Account> {
    this.invalidate();
    const [row] = await this.db
      .insert(accounts)
      .values(newAccountRow(a))
      .returning()
      .catch((err: unknown) => {
        throw isDuplicateIdentity(err) ? alreadyConnected() : err;
      });
    return toAccount(row!);
  }

  /** Many connections in one statement (bulk provisioning, the scale benchmark); no quota is checked here. */
  async createMany(list: NewAccount[]): Promise<void> {
    this.invalidate();
    // Lists are in id order, and ids made in one millisecond differ only in their random part: the sorted ids are
    // handed out in the given order, so the accounts list in the order they were given (as one by one would).
    const rows = list.map(newAccountRow);
    const ids = rows.map((r) => r.id).sort();
    for (const [i, r] of rows.entries()) r.id = ids[i]!;
    // A statement carries at most 65,535 parameters: 17 a row.
    for (let i = 0; i < rows.length; i += 2000) await this.db.insert(accounts).values(rows.slice(i, i + 2000));
  }

  /** The connection holding this broker identity, whoever owns it (connect flows check before provisioning). */
  async byIdentity(identity: string): Promise<Account | null> {
    const [row] = await this.db.select().from(accounts).where(eq(accounts.brokerIdentity, identity)).limit(1);
    return row ? toAccount(row) : null;
  }

  /**
   * A reconnect of a connected broker account by its owner: new broker link and credentials on the same row
   * (its group, role, rules, ledger and links stay); a connection that was down is connected again.
   */
  async reconnect(
    id: string,
    link: { brokerAccountId: string; credentialsEnc: string; brokerName?: string | null; currency?: string | null },
  ): Promise<void> {
    this.invalidate();
    await this.db
      .update(accounts)
      .set({
        brokerAccountId: link.brokerAccountId,
        credentialsEnc: link.credentialsEnc,
        health: initialHealth(),
        updatedAt: new Date(),
        ...(link.brokerName !== undefined ? { brokerName: link.brokerName } : {}),
        ...(link.currency ? { currency: link.currency } : {}),
        status: sql`case when ${accounts.status} in ('disconnected', 'reconnect_required') then 'connected' else ${accounts.status} end`,
        statusReason: sql`case when ${accounts.status} in ('disconnected', 'reconnect_required') then null else ${accounts.statusReason} end`,
      })
      .where(eq(accounts.id, id));
  }

  /** Rows without an identity that are not disabled duplicates: platform A rows from before migration 0004. */
  async withoutIdentity(): Promise<Account[]> {
    return (
      await this.db
        .select()
        .from(accounts)
        .where(and(isNull(accounts.brokerIdentity), ne(accounts.status, 'disabled'), live))
        .orderBy(asc(accounts.createdAt), asc(accounts.id))
    ).map(toAccount);
  }

  /**
   * Gives a row its identity; when another row holds it already (the older connection), this one is disabled
   * as a duplicate instead. True when the identity was taken.
   */
  async claimIdentity(id: string, identity: string): Promise<boolean> {
    this.invalidate();
    const holder = await this.byIdentity(identity);
    if (!holder) {
      try {
        await this.db
          .update(accounts)
          .set({ brokerIdentity: identity, updatedAt: new Date() })
          .where(eq(accounts.id, id));
        return true;
      } catch (err) {
        if (!isDuplicateIdentity(err)) throw err;
      }
    }
    const self = await this.byId(id);
    const keeper = holder ?? (await this.byIdentity(identity));
    const reason =
      keeper && self && keeper.userId === self.userId
        ? `duplicate connection: this broker account is already connected as ${keeper.id}`
        : 'duplicate connection: this broker account is already connected by another user';
    await this.setStatus(id, 'disabled', reason);
    return false;
  }

  /** The user's list if this process holds it (the embedded store's cache), else null: an answer without a statement. */
  held(userId: string): Account[] | null {
    return this.cache?.get(userId)?.slice() ?? null;
  }

  /**
   * A page of the user's live accounts in id order (the API's paging order): at most `limit` with an id above
   * `after`, read from the table, not out of the whole list. Where this process keeps lists (the embedded store)
   * and the user's is not held, it starts reading it too, for the pages that follow; this page does not wait for it.
   */
  async listPage(userId: string, after: string | undefined, limit: number): Promise<Account[]> {
    const page = readAccountPage(this.db, and(eq(accounts.userId, userId), live)!, after, limit);
    // After the page's statement: the embedded store runs them in the order they come.
    if (this.cache && !this.cache.has(userId)) this.load(userId).catch(() => undefined);
    return (await page).map((k) => k.account);
  }

  async list(userId: string, filter: { platform?: Platform; groupId?: string } = {}): Promise<Account[]> {
    if (this.cache) {
      const all = this.cache.get(userId) ?? (await this.load(userId));
      // A copy either way (the cached list is patched in place); unfiltered, a plain copy of 10,000 references
      // took 0.014 ms against 0.4 ms for the filter (load 10), on every GET /v1/accounts.
      if (!filter.platform && !filter.groupId) return all.slice();
      return all.filter(
        (a) =>
          (!filter.platform || a.platform === filter.platform) && (!filter.groupId || a.groupId === filter.groupId),
      );
    }
    const conds = [eq(accounts.userId, userId), live];
    if (filter.platform) conds.push(eq(accounts.platform, filter.platform));
    if (filter.groupId) conds.push(eq(accounts.groupId, filter.groupId));
    return readAccountList(this.db, and(...conds)!);
  }

  async owned(userId: string, id: string): Promise<Account | null> {
    if (this.cache) return (await this.list(userId)).find((a) => a.id === id) ?? null;
    const [row] = await this.db
      .select()
      .from(accounts)
      .where(and(eq(accounts.id, id), eq(accounts.userId, userId), live))
      .limit(1);
    return row ? toAccount(row) : null;
  }

  /**
   * For the engine and adapters, which act on behalf of the owner already checked at the edge. A removed row is
   * returned too (the history refers to it); `removedAt` says so, and no adapter is built for it.
   */
  async byId(id: string): Promise<Account | null> {
    // A live account in a cached list is current (see `cache`): the watcher asks for its Master before every job,
    // and a read here is a round trip to the store before the copy can be planned.
    const slot = this.slots.get(id);
    if (slot) return slot.list[slot.i]!;
    const [row] = await this.db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
    return row ? toAccount(row) : null;
  }

  /** Names by id, removed connections included: the history (trades, ledger) names the accounts it involves. */
  async namesOf(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.db
      .select({ id: accounts.id, name: accounts.name })
      .from(accounts)
      .where(inArray(accounts.id, unique));
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Every live connection (health monitor, watcher, reconciler): a removed one is never read or traded on. */
  async all(): Promise<Account[]> {
    return (await this.db.select().from(accounts).where(live).orderBy(asc(accounts.createdAt))).map(toAccount);
  }

  /** Live Masters (watcher, reconciler): a scan need not read every Slave. */
  async masters(): Promise<Account[]> {
    return (
      await this.db
        .select()
        .from(accounts)
        .where(and(live, eq(accounts.role, 'master')))
        .orderBy(asc(accounts.createdAt))
    ).map(toAccount);
  }

  /** Live connections in id order, `limit` after `after`: a health round reads them a slice at a time. */
  async livePage(after: string | null, limit: number): Promise<Account[]> {
    return (
      await this.db
        .select()
        .from(accounts)
        .where(and(live, after === null ? undefined : gt(accounts.id, after)))
        .orderBy(asc(accounts.id))
        .limit(limit)
    ).map(toAccount);
  }

  async countLive(): Promise<number> {
    const [r] = await this.db.select({ n: sql<number>`count(*)::int` }).from(accounts).where(live);
    return Number(r?.n ?? 0);
  }

  /**
   * Sealed credentials of one account. Reads asked for in the same turn of the event loop go as one query: the
   * first adapters of a health slice or of a Master's Slaves are built together, and 10,000 single-row reads
   * would hold the loop for seconds.
   */
  credentialsEnc(id: string): Promise<string | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.credentialReads.get(id);
      if (waiting) waiting.push({ resolve, reject });
      else this.credentialReads.set(id, [{ resolve, reject }]);
      if (this.credentialReads.size === 1 && waiting === undefined) setImmediate(() => void this.readCredentials());
    });
  }

  private async readCredentials(): Promise<void> {
    const batch = this.credentialReads;
    this.credentialReads = new Map();
    const ids = [...batch.keys()];
    try {
      const found = new Map<string, string | null>();
      for (let i = 0; i < ids.length; i += 1000) {
        const rows = await this.db
          .select({ id: accounts.id, c: accounts.credentialsEnc })
          .from(accounts)
          .where(inArray(accounts.id, ids.slice(i, i + 1000)));
        for (const r of rows) found.set(r.id, r.c);
      }
      for (const [id, waiters] of batch) for (const w of waiters) w.resolve(found.get(id) ?? null);
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    }
  }

  /** A token refresh of one account: the cached account (which holds no credentials) only changes its time. */
  async setCredentialsEnc(id: string, sealed: string): Promise<void> {
    const updatedAt = new Date();
    await this.db.update(accounts).set({ credentialsEnc: sealed, updatedAt }).where(eq(accounts.id, id));
    this.patch(id, { updatedAt });
  }

  /** Re-points an account at its broker (demo upstreams re-provisioned after a restart, or a reconnect). */
  async relink(id: string, brokerAccountId: string, credentialsEnc: string): Promise<void> {
    const updatedAt = new Date();
    await this.db.update(accounts).set({ brokerAccountId, credentialsEnc, updatedAt }).where(eq(accounts.id, id));
    this.patch(id, { brokerAccountId, updatedAt });
  }

  /**
   * Compare-and-set: changes the status only if it is still `expected`, so a background check that read the
   * account earlier cannot overwrite a lock or pause that landed meanwhile. True when it changed.
   */
  async setStatusIf(
    id: string,
    expected: AccountStatus,
    status: AccountStatus,
    reason: string | null,
  ): Promise<boolean> {
    const updatedAt = new Date();
    const rows = await this.db
      .update(accounts)
      .set({ status, statusReason: reason, updatedAt })
      .where(and(eq(accounts.id, id), eq(accounts.status, expected)))
      .returning({ id: accounts.id });
    if (rows.length > 0) this.patch(id, { status, statusReason: reason, updatedAt });
    return rows.length > 0;
  }

  async setStatus(id: string, status: AccountStatus, reason: string | null = null): Promise<void> {
    const updatedAt = new Date();
    await this.db.update(accounts).set({ status, statusReason: reason, updatedAt }).where(eq(accounts.id, id));
    this.patch(id, { status, statusReason: reason, updatedAt });
  }

  async setHealth(id: string, health: Health): Promise<void> {
    await this.applyHealth([{ id, health, funds: null }]);
  }

  async setFunds(id: string, balance: Decimal, equity: Decimal): Promise<void> {
    const updatedAt = new Date();
    await this.db
      .update(accounts)
      .set({ balance: balance.toString(), equity: equity.toString(), updatedAt })
      .where(eq(accounts.id, id));
    this.patch(id, { balance, equity, updatedAt });
  }

  /**
   * A health round's results for many accounts in one statement (an UPDATE from a VALUES list): health always,
   * balance and equity where the read got them. The cached accounts are replaced with the new values.
   */
  async applyHealth(writes: HealthWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const updatedAt = new Date();
    // At most 65,535 parameters a statement: 4 a row.
    for (let i = 0; i < writes.length; i += 5000) {
      const rows = writes
        .slice(i, i + 5000)
        .map(
          (w) =>
            sql`(${w.id}::text, ${JSON.stringify(w.health)}::jsonb, ${w.funds?.balance.toString() ?? null}::numeric, ${w.funds?.equity.toString() ?? null}::numeric)`,
        );
      await this.db.execute(sql`update ${accounts}
        set health = v.health,
            balance = coalesce(v.balance, ${accounts.balance}),
            equity = coalesce(v.equity, ${accounts.equity}),
            updated_at = ${updatedAt.toISOString()}::timestamptz
        from (values ${sql.join(rows, sql`, `)}) as v(id, health, balance, equity)
        where ${accounts.id} = v.id`);
    }
    for (const w of writes)
      this.patch(w.id, {
        health: w.health,
        updatedAt,
        ...(w.funds ? { balance: w.funds.balance, equity: w.funds.equity } : {}),
      });
  }

  async setRoleAndGroup(id: string, role: Role, groupId: string | null): Promise<void> {
    const updatedAt = new Date();
    await this.db.update(accounts).set({ role, groupId, updatedAt }).where(eq(accounts.id, id));
    this.patch(id, { role, groupId, updatedAt });
  }

  /**
   * Copies still open that involve the account: open links (positions and pending orders) where it is the Slave,
   * and open links where it is the Master those copies follow.
   */
  async openCopies(id: string): Promise<{ asSlave: number; asMaster: number }> {
    const [row] = await this.db
      .select({
        asSlave: sql<number>`count(*) filter (where ${positionLinks.slaveAccountId} = ${id})`.mapWith(Number),
        asMaster: sql<number>`count(*) filter (where ${positionLinks.masterAccountId} = ${id})`.mapWith(Number),
      })
      .from(positionLinks)
      .where(
        and(
          eq(positionLinks.open, true),
          or(eq(positionLinks.slaveAccountId, id), eq(positionLinks.masterAccountId, id)),
        ),
      );
    return { asSlave: row?.asSlave ?? 0, asMaster: row?.asMaster ?? 0 };
  }

  /**
   * Removes a connection as a soft delete, so the product can still prove what it did for every Slave: the row
   * stays (marked `removed_at`) with its trades, its ledger rows and the ledger rows of its Slaves, while in one
   * transaction its sealed credentials are wiped, its broker identity is released (the broker account can be
   * connected again, as a new connection), it leaves its group, and its copy rule, position links, watcher
   * state, shadow twin, risk limits and equity history go. Open links only exist here when the caller forced the removal.
   */
  async remove(id: string): Promise<void> {
    this.invalidate();
    this.rules?.delete(id);
    // Its Master items go with it: read again (none) if it is ever asked for, whether or not the removal committed.
    this.items?.forget(id);
    try {
      await this.db.transaction(async (tx) => {
        // The account row first: its trigger then takes the group's version row (migration 0014), the order a
        // health slice takes them in (its rows, then the version). The rule's delete first would take the version
        // row before this account's, and deadlock against a slice holding this row and waiting for the version.
        const now = new Date();
        await tx
          .update(accounts)
          .set({
            removedAt: now,
            credentialsEnc: null,
            brokerIdentity: null,
            groupId: null,
            status: 'disabled',
            statusReason: 'removed',
            updatedAt: now,
          })
          .where(and(eq(accounts.id, id), live));
        await tx.delete(riskLimits).where(eq(riskLimits.targetId, id));
        await tx.delete(copyRules).where(eq(copyRules.slaveAccountId, id));
        await tx
          .delete(positionLinks)
          .where(or(eq(positionLinks.slaveAccountId, id), eq(positionLinks.masterAccountId, id)));
        await tx.delete(masterItems).where(eq(masterItems.accountId, id));
        await tx.delete(shadowTwins).where(eq(shadowTwins.accountId, id));
        // Balance history is not proof of what was copied; it went with the account before and still does.
        await tx.delete(equitySnapshots).where(eq(equitySnapshots.accountId, id));
      });
    } finally {
      this.items?.forget(id);
    }
    this.invalidate();
  }

  /** Connections that count toward the user's quota (a disabled duplicate does not). */
  async countActive(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(accounts)
      .where(and(eq(accounts.userId, userId), ne(accounts.status, 'disabled'), live));
    return Number(r?.n ?? 0);
  }

  // --- copier groups -------------------------------------------------------------------------------

  async renameGroup(userId: string, id: string, name: string): Promise<boolean> {
    const rows = await this.db
      .update(copierGroups)
      .set({ name })
      .where(and(eq(copierGroups.id, id), eq(copierGroups.userId, userId)))
      .returning({ id: copierGroups.id });
    return rows.length > 0;
  }

  /** Deletes a group; its accounts stay, out of any group (the foreign key sets their group to null), with their roles. */
  async deleteGroup(userId: string, id: string): Promise<boolean> {
    this.invalidate();
    return this.db.transaction(async (tx) => {
      await tx
        .update(accounts)
        .set({ groupId: null, updatedAt: new Date() })
        .where(and(eq(accounts.groupId, id), eq(accounts.userId, userId)));
      await tx.delete(riskLimits).where(and(eq(riskLimits.targetId, id), eq(riskLimits.userId, userId)));
      const rows = await tx
        .delete(copierGroups)
        .where(and(eq(copierGroups.id, id), eq(copierGroups.userId, userId)))
        .returning({ id: copierGroups.id });
      return rows.length > 0;
    });
  }

  async createGroup(userId: string, name: string): Promise<CopierGroup> {
    const [row] = await this.db
      .insert(copierGroups)
      .values({ id: newId('grp'), userId, name })
      .returning();
    return row!;
  }

  async countGroups(userId: string): Promise<number> {
    const [r] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(copierGroups)
      .where(eq(copierGroups.userId, userId));
    return Number(r?.n ?? 0);
  }

  async ownedGroup(userId: string, id: string): Promise<CopierGroup | null> {
    const [row] = await this.db
      .select()
      .from(copierGroups)
      .where(and(eq(copierGroups.id, id), eq(copierGroups.userId, userId)))
      .limit(1);
    return row ?? null;
  }

  /** Oldest first, by id (its leading time part); `after` = the last id of the previous page. */
  async listGroups(userId: string, page: { after?: string | undefined; limit?: number } = {}): Promise<GroupView[]> {
    const q = this.db
      .select()
      .from(copierGroups)
      .where(and(eq(copierGroups.userId, userId), page.after ? gt(copierGroups.id, page.after) : undefined))
      .orderBy(asc(copierGroups.id));
    const groups = await (page.limit ? q.limit(page.limit) : q);
    if (groups.length === 0) return [];
    const members = await this.list(userId);
    const rules = await this.rulesFor(members.filter((m) => m.role === 'slave').map((m) => m.id));
    return groups.map((g) => this.view(g, members, rules));
  }

  async groupView(userId: string, id: string): Promise<GroupView | null> {
    const g = await this.ownedGroup(userId, id);
    if (!g) return null;
    const members = await this.list(userId, { groupId: id });
    return this.view(g, members, await this.rulesFor(members.map((m) => m.id)));
  }

  private view(g: CopierGroup, members: Account[], rules: Map<string, CopyRule>): GroupView {
    const inGroup = members.filter((m) => m.groupId === g.id);
    return {
      ...g,
      master: inGroup.find((m) => m.role === 'master') ?? null,
      slaves: inGroup
        .filter((m) => m.role === 'slave')
        .map((m) => ({ ...m, rule: rules.get(m.id) ?? withDefaults(undefined) })),
    };
  }

  /**
   * The live Slaves of a user's group, oldest first (as `list`), each with its copy rule (defaults when none is
   * stored): what every copy plans from. On the single-writer store from the caches. On PostgreSQL, where other
   * processes write accounts and rules, held between copies and checked by every read (`GroupSlavesReader`).
   */
  async slavesOfGroup(userId: string, groupId: string): Promise<GroupSlave[]> {
    if (this.cache) return this.cachedSlavesOfGroup(this.cache, userId, groupId);
    return this.groupSlaves!.read(userId, groupId);
  }

  /**
   * On PostgreSQL, the group's Slaves as held when a read confirmed them at most `maxAgeMs` ago, for a copy whose
   * record is guarded by their `settled` version (`GroupSlavesReader.recent`); null when not held or older, and
   * always on the single-writer store, whose `slavesOfGroup` is served from memory without a statement.
   */
  recentSlavesOfGroup(userId: string, groupId: string, maxAgeMs: number): HeldGroupSlaves | null {
    return this.groupSlaves?.recent(userId, groupId, maxAgeMs) ?? null;
  }

  /**
   * `slavesOfGroup` from the caches: one pass over the user's list, and the rules from memory when all are there
   * (a copy asks for every Slave of its group each time; a filter, a copy and a Map of 1000 rules each time were
   * the most of this read).
   */
  private async cachedSlavesOfGroup(
    cache: Map<string, Account[]>,
    userId: string,
    groupId: string,
  ): Promise<GroupSlave[]> {
    const all = cache.get(userId) ?? (await this.load(userId));
    const slaves: Account[] = [];
    for (const a of all) if (a.groupId === groupId && a.role === 'slave') slaves.push(a);
    const cached = this.rules;
    const rules: ReadonlyMap<string, CopyRule | null> =
      cached && slaves.every((a) => cached.has(a.id)) ? cached : await this.rulesFor(slaves.map((a) => a.id));
    return slaves.map((account) => ({ account, rule: rules.get(account.id) ?? withDefaults(undefined) }));
  }

  async rulesFor(slaveIds: string[]): Promise<Map<string, CopyRule>> {
    if (slaveIds.length === 0) return new Map();
    // Every copy asks for the rules of all its Slaves: on the single-writer store they are served from memory.
    if (this.rules) {
      const missing = slaveIds.filter((id) => !this.rules!.has(id));
      if (missing.length > 0) {
        const rows = await this.db.select().from(copyRules).where(inArray(copyRules.slaveAccountId, missing));
        const found = new Map(rows.map((r) => [r.slaveAccountId, withDefaults(r.rule as Partial<CopyRule>)]));
        for (const id of missing) this.rules.set(id, found.get(id) ?? null);
      }
      const out = new Map<string, CopyRule>();
      for (const id of slaveIds) {
        const r = this.rules.get(id);
        if (r) out.set(id, r);
      }
      return out;
    }
    const rows = await this.db.select().from(copyRules).where(inArray(copyRules.slaveAccountId, slaveIds));
    return new Map(rows.map((r) => [r.slaveAccountId, withDefaults(r.rule as Partial<CopyRule>)]));
  }

  /** After a write of the rule elsewhere (rule revisions): the next read takes it from the table. */
  forgetRule(slaveAccountId: string): void {
    this.rules?.delete(slaveAccountId);
  }

  async setRule(slaveAccountId: string, rule: CopyRule): Promise<void> {
    this.rules?.delete(slaveAccountId);
    await this.db
      .insert(copyRules)
      .values({ slaveAccountId, rule })
      .onConflictDoUpdate({ target: copyRules.slaveAccountId, set: { rule, updatedAt: new Date() } });
    this.rules?.delete(slaveAccountId);
  }
}

/** A new connection's row: connected, with fresh health, its broker identity and a new id. */
function newAccountRow(a: NewAccount) {
  return {
    brokerIdentity: identityOf(a),
    id: newId('acc'),
    userId: a.userId,
    platform: a.platform,
    role: a.role,
    status: 'connected',
    name: a.name,
    groupId: a.groupId ?? null,
    brokerAccountId: a.brokerAccountId,
    brokerAccountNumber: a.brokerAccountNumber,
    brokerName: a.brokerName ?? null,
    environment: a.environment ?? null,
    currency: a.currency ?? null,
    credentialsEnc: a.credentialsEnc ?? null,
    health: initialHealth(),
    balance: a.balance?.toString() ?? null,
    equity: a.equity?.toString() ?? null,
  };
}

/** The list's order: created_at (to the microsecond), then id, as `readAccountList` sorts it. */
const inListOrder = (a: Keyed, b: Keyed) =>
  a.createdKey < b.createdKey
    ? -1
    : a.createdKey > b.createdKey
      ? 1
      : a.account.id < b.account.id
        ? -1
        : a.account.id > b.account.id
          ? 1
          : 0;
