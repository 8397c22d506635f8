import { and, asc, desc, eq, getTableColumns, inArray, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import { olderThan, positionOf } from './keyset.js';
import { pgArray } from '../pg-array.js';
import { executeNamed } from '../named-statement.js';
import type { Db } from '../db.js';
import { accounts, copyIntents, masterItems, positionLinks, trades } from '../schema.js';
import { allowedFrom, INITIAL_STATES, IntentTransitionError, type IntentState } from '../../domain/intent.js';
import type { EventsRepo, NewEvent, Tx } from './events.js';
import { decText, type Decimal } from '../../domain/decimal.js';
import type {
  CopyIntent,
  LinkKind,
  MasterItem,
  NewIntent,
  NewLink,
  NewMasterItem,
  NewTrade,
  PositionLink,
  Trade,
} from '../../domain/ledger-types.js';
import {
  intentFromRow,
  intentSetToRow,
  linkFromRow,
  linkToRow,
  masterItemFromRow,
  masterItemToRow,
  tradeFromRow,
  tradeSetToRow,
  tradeToRow,
  type IntentInsert,
} from '../ledger-mappers.js';
import { accountLeaseKey, type Fence } from '../../domain/lease.js';
import { mayBeOurTag } from '../../domain/correlation.js';
import { checkFence } from './leases.js';
import { settledGuard } from './group-slaves-read.js';
import { rowsOf } from '../rows-of.js';
import { GroupMovedError, type GroupGuard } from '../../domain/group-moved.js';
import {
  applyLinks,
  movedUnder,
  moveIntents,
  type IntentUpdate,
  type LinkChange,
  type LinkKey,
} from './trades-outcomes.js';
import type { MasterItemsCache } from './master-items-cache.js';

export type { IntentUpdate, LinkChange } from './trades-outcomes.js';

type TradeWithPosition = Trade & { position: string };
type IntentWithPosition = CopyIntent & { position: string };

export interface OutcomeWrite {
  intentId?: string;
  update?: IntentUpdate;
  /** A trade's own change written with the batch (recorded -> accepted). */
  trade?: { id: string; set: Partial<NewTrade> };
  links?: LinkChange[];
  events?: NewEvent[];
}

/**
 * Columns written by the one-statement intent insert, with their types: each goes as one parameter (a value or an
 * array), so the statement is one whatever the number of Slaves (PGlite: far cheaper than a multi-row VALUES list).
 */
const INTENT_COLS = [
  ['id', 'text'],
  ['trade_id', 'text'],
  ['slave_account_id', 'text'],
  ['tag', 'text'],
  ['action', 'text'],
  ['symbol', 'text'],
  ['side', 'text'],
  ['planned_volume', 'numeric'],
  ['planned_price', 'numeric'],
  ['stop_loss', 'numeric'],
  ['take_profit', 'numeric'],
  ['state', 'text'],
  ['skip_reason', 'text'],
  ['target_id', 'text'],
  ['outcome', 'jsonb'],
  ['latency', 'jsonb'],
  ['attempts', 'integer'],
  ['sizing_inputs', 'jsonb'],
  ['rule_revision', 'integer'],
] as const;
const INTENT_FIELDS: Record<(typeof INTENT_COLS)[number][0], keyof IntentInsert> = {
  id: 'id',
  trade_id: 'tradeId',
  slave_account_id: 'slaveAccountId',
  tag: 'tag',
  action: 'action',
  symbol: 'symbol',
  side: 'side',
  planned_volume: 'plannedVolume',
  planned_price: 'plannedPrice',
  stop_loss: 'stopLoss',
  take_profit: 'takeProfit',
  state: 'state',
  skip_reason: 'skipReason',
  target_id: 'targetId',
  outcome: 'outcome',
  latency: 'latency',
  attempts: 'attempts',
  sizing_inputs: 'sizingInputs',
  rule_revision: 'ruleRevision',
};
async function insertIntents(tx: Tx, tradeId: string, rows: NewIntent[]): Promise<void> {
  if (rows.length === 0) return;
  checkNewIntents(tradeId, rows);
  await tx.execute(intentInsert(rows));
}

/**
 * What a new intent must be: in an initial state, and of the trade written beside it. copy_intents has no
 * foreign key to trades (migration 0011), so this check is what keeps an intent from naming another trade.
 */
function checkNewIntents(tradeId: string, rows: NewIntent[]): void {
  for (const r of rows) {
    if (!INITIAL_STATES.includes(r.state as IntentState))
      throw new IntentTransitionError(r.id, r.state as IntentState, null);
    if (r.tradeId !== tradeId) throw new Error(`intent ${r.id} names trade ${r.tradeId}, recorded with ${tradeId}`);
  }
}

/** Numeric columns hold Decimals, written as decimal text (the text rule of ledger-mappers.ts: `toString()`). */
const INTENT_WRITE = INTENT_COLS.map(([col, type]) => [col, INTENT_FIELDS[col], type, type === 'numeric'] as const);

/**
 * The one-statement insert of intents (checked for their initial states by the caller). A fan-out's rows differ
 * in a few columns (id, Slave, tag; the volume where rules differ): a column the same in every row goes as one
 * value, the others as one array each (`unnest`), and a column null in every row is left to its default. Against
 * one JSON document of every row's every column (`json_to_recordset`), PostgreSQL and PGlite parse a third of the
 * bytes and no JSON. A fan-out's rows share their levels' Decimals, so each distinct one is turned into text once.
 */
function intentInsert(rows: NewIntent[]): SQL {
  const texts = new Map<Decimal, string>();
  const text = (d: Decimal): string => {
    let t = texts.get(d);
    if (t === undefined) texts.set(d, (t = decText(d)));
    return t;
  };
  // A fan-out's rows share their sizing record where their sizing is the same: its JSON is written once.
  const jsons = new Map<unknown, string>();
  const json = (v: unknown): string => {
    let t = jsons.get(v);
    if (t === undefined) jsons.set(v, (t = JSON.stringify(v)));
    return t;
  };
  const names: string[] = [];
  const arrays: SQL[] = [];
  const arrayNames: string[] = [];
  const selected: SQL[] = [];
  const values: Array<string | null> = new Array(rows.length);
  for (const [col, field, type, decimal] of INTENT_WRITE) {
    let same = true;
    for (let i = 0; i < rows.length; i++) {
      const v = (rows[i] as Record<string, unknown>)[field];
      const t =
        v === null || v === undefined
          ? null
          : decimal
            ? text(v as Decimal)
            : type === 'jsonb'
              ? json(v)
              : String(v as string | number);
      values[i] = t;
      if (t !== values[0]) same = false;
    }
    if (same && values[0] === null) continue;
    names.push(col);
    if (same) {
      selected.push(sql`${values[0]}::${sql.raw(type)}`);
      continue;
    }
    arrays.push(sql`${pgArray(values)}::${sql.raw(type)}[]`);
    arrayNames.push(col);
    // A column set in some rows only: attempts is not null, its default is what an absent value means.
    selected.push(sql.raw(col === 'attempts' ? 'coalesce(u.attempts, 0)' : `u.${col}`));
  }
  const from =
    arrays.length > 0 ? sql` from unnest(${sql.join(arrays, sql`, `)}) as u(${sql.raw(arrayNames.join(', '))})` : sql``;
  return sql`insert into copy_intents_recent (${sql.raw(names.join(', '))}) select ${sql.join(selected, sql`, `)}${from}`;
}

/** Trades remembered for a move (TradesRepo.toMove); past it, the oldest are left to the sweep. */
const MAX_TO_MOVE = 10_000;

/** Every column of copy_intents, in its order: what a move from copy_intents_recent carries over. */
const INTENT_ALL = sql.raw(
  Object.values(getTableColumns(copyIntents))
    .map((c) => c.name)
    .join(', '),
);

/**
 * Moves intents from copy_intents_recent (primary key only, where the record writes them: migration 0013) to
 * copy_intents proper, whose secondary indexes they are entered in here, behind the copy. One statement: in any
 * snapshot a row is in exactly one of the two tables, and every read of copy_intents sees both.
 */
function moveRecent(which: SQL): SQL {
  return sql`with m as (delete from copy_intents_recent r where ${which} returning r.*) insert into copy_intents (${INTENT_ALL}) select ${INTENT_ALL} from m`;
}

/** `{column name: value}` of a row's set keys: what json_populate_record(null::table, ...) reads. */
function byColumn(table: Parameters<typeof getTableColumns>[0], row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = row as Record<string, unknown>;
  for (const [key, col] of Object.entries(getTableColumns(table))) if (r[key] !== undefined) out[col.name] = r[key];
  return out;
}

/**
 * recordAction in one statement: the trade (nothing when its action id, tag or id is taken), then, only if it
 * went in, its intents and the watcher's item. One statement is atomic without BEGIN/COMMIT: one round trip and
 * one commit before the first send.
 */
async function recordActionAtOnce(
  db: Db,
  trade: NewTrade,
  intents: NewIntent[],
  item: NewMasterItem | undefined,
  guard: GroupGuard | undefined,
): Promise<boolean> {
  checkNewIntents(trade.id, intents);
  const t = byColumn(trades, tradeToRow(trade));
  const tCols = sql.raw(Object.keys(t).join(', '));
  // Guarded, the trade (and so everything after it) goes in only while the group is as its Slaves were read; the
  // guard is read again in the answer (the statement's one snapshot) to tell a moved group from an action taken.
  const ok = guard ? settledGuard(guard.groupId, guard.settled) : sql`true`;
  const parts = [
    sql`with t as (insert into trades (${tCols}) select ${tCols} from json_populate_record(null::trades, ${JSON.stringify(t)}::json) where ${ok} on conflict do nothing returning id)`,
  ];
  if (intents.length > 0) parts.push(sql`, i as (${intentInsert(intents)} where exists (select 1 from t))`);
  if (item) {
    const m = byColumn(masterItems, masterItemToRow(item));
    const mCols = Object.keys(m);
    const rest = mCols.filter((c) => !['account_id', 'kind', 'item_id', 'updated_at'].includes(c));
    parts.push(
      sql`, m as (insert into master_items (${sql.raw(mCols.join(', '))}) select ${sql.raw(mCols.join(', '))} from json_populate_record(null::master_items, ${JSON.stringify(m)}::json) where exists (select 1 from t) on conflict (account_id, kind, item_id) do update set ${sql.raw([...rest.map((c) => `${c} = excluded.${c}`), 'updated_at = now()'].join(', '))})`,
    );
  }
  parts.push(sql` select count(*)::int as n, ${ok} as ok from t`);
  // Its text depends on the fan-out's shape only (which columns vary, a guard or not), never on a value.
  const res = await executeNamed(db, sql.join(parts));
  const [r] = rowsOf<{ n: number; ok: boolean }>(res);
  if (guard && r && !r.ok) throw new GroupMovedError(guard.groupId);
  return Number(r?.n ?? 0) > 0;
}

/** Trades, the copy ledger (intents), position/order links and the watcher's view of Master items. */
export class TradesRepo {
  /**
   * Set by a worker process: the copy ledger's writes (recording a Master's intents, their outcomes) are made
   * only under the Master's lease at the epoch this process holds, checked in the write's own transaction.
   * Null (one process, the api role): unfenced.
   */
  fence: Fence | null = null;

  /**
   * Trades whose intents this process recorded into copy_intents_recent and has not moved yet: moved once the outcome
   * writer's next burst of batches commits, or after another caller's next batch (their updates land on the narrow
   * rows first). What a crash or a failed move leaves there
   * stays readable and is moved by `moveRecentOlderThan` (the service's sweep).
   */
  private readonly toMove = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly events: EventsRepo,
    /** The Master items in memory, on the single-writer (embedded) store only; null: every read goes to the table. */
    private readonly items: MasterItemsCache | null = null,
  ) {}

  /** Runs a write of Master items: the cache follows it once committed, and lets go of its accounts if it threw. */
  private async writingItems<T>(accountIds: string[], write: () => Promise<T>, committed: (r: T) => void): Promise<T> {
    if (!this.items || accountIds.length === 0) return write();
    let r: T;
    try {
      r = await write();
    } catch (err) {
      this.items.failed(accountIds);
      throw err;
    }
    committed(r);
    return r;
  }

  private async fenceMasters(tx: Tx, masterAccountIds: string[]): Promise<void> {
    if (this.fence) await checkFence(tx, this.fence, masterAccountIds.map(accountLeaseKey));
  }

  /** The Masters whose ledger an outcome batch writes (through its intents' and trades' rows). */
  private async fenceOutcomes(tx: Tx, intentIds: string[], tradeIds: string[]): Promise<void> {
    if (!this.fence || intentIds.length + tradeIds.length === 0) return;
    const byIntent =
      intentIds.length > 0
        ? await tx
            .select({ m: trades.masterAccountId })
            .from(copyIntents)
            .innerJoin(trades, eq(trades.id, copyIntents.tradeId))
            .where(inArray(copyIntents.id, intentIds))
        : [];
    const byTrade =
      tradeIds.length > 0
        ? await tx.select({ m: trades.masterAccountId }).from(trades).where(inArray(trades.id, tradeIds))
        : [];
    await this.fenceMasters(
      tx,
      [...byIntent, ...byTrade].map((r) => r.m),
    );
  }

  /** Runs a write and appends its events in one transaction, then wakes the event consumers. */
  private async withEvents(evs: NewEvent[], write: (tx: Db) => Promise<void>): Promise<void> {
    if (evs.length === 0) return write(this.db);
    await this.db.transaction(async (tx) => {
      await write(tx as unknown as Db);
      await this.events.append(tx, evs);
    });
    this.events.notify(evs.map((e) => e.userId));
  }

  async insertTrade(t: NewTrade): Promise<Trade> {
    const [row] = await this.db.insert(trades).values(tradeToRow(t)).returning();
    return tradeFromRow(row!);
  }

  async updateTrade(id: string, set: Partial<NewTrade>, evs: NewEvent[] = []): Promise<void> {
    await this.withEvents(evs, async (db) => {
      await db
        .update(trades)
        .set({ ...tradeSetToRow(set), updatedAt: new Date() })
        .where(eq(trades.id, id));
    });
  }

  /** Updates the trade only while it is in one of `from`: returns false (and emits nothing) otherwise. */
  async updateTradeIf(id: string, from: string[], set: Partial<NewTrade>, evs: NewEvent[] = []): Promise<boolean> {
    const done = await this.db.transaction(async (tx) => {
      const upd = await tx
        .update(trades)
        .set({ ...tradeSetToRow(set), updatedAt: new Date() })
        .where(and(eq(trades.id, id), inArray(trades.status, from)))
        .returning({ id: trades.id });
      if (upd.length === 0) return false;
      if (evs.length > 0) await this.events.append(tx, evs);
      return true;
    });
    if (done) this.events.notify(evs.map((e) => e.userId));
    return done;
  }

  /**
   * Order-route trades still waiting for their Master's outcome (the route answered 409, or never finished).
   * A removed Master's stay as they are: nothing reads its broker any more.
   */
  async apiTradesAwaitingMaster(): Promise<Trade[]> {
    const rows = await this.db
      .select()
      .from(trades)
      .innerJoin(accounts, eq(trades.masterAccountId, accounts.id))
      .where(
        and(eq(trades.source, 'api'), inArray(trades.status, ['pending', 'unresolved']), isNull(accounts.removedAt)),
      )
      .orderBy(asc(trades.createdAt));
    return rows.map((r) => tradeFromRow(r.trades));
  }

  async ownedTrade(userId: string, id: string): Promise<Trade | null> {
    const [row] = await this.db
      .select()
      .from(trades)
      .where(and(eq(trades.id, id), eq(trades.userId, userId)))
      .limit(1);
    return row ? tradeFromRow(row) : null;
  }

  /** The trade a request created (the order route records its request id); settles a key left in flight. */
  async tradeOfRequest(userId: string, requestId: string): Promise<Trade | null> {
    const [row] = await this.db
      .select()
      .from(trades)
      .where(and(eq(trades.userId, userId), eq(trades.requestId, requestId)))
      .limit(1);
    return row ? tradeFromRow(row) : null;
  }

  async tradeById(id: string): Promise<Trade | null> {
    const [row] = await this.db.select().from(trades).where(eq(trades.id, id)).limit(1);
    return row ? tradeFromRow(row) : null;
  }

  async tradeByTag(tag: string): Promise<Trade | null> {
    const [row] = await this.db.select().from(trades).where(eq(trades.tag, tag)).limit(1);
    return row ? tradeFromRow(row) : null;
  }

  async tradesOfMasterPosition(masterAccountId: string, masterPositionId: string): Promise<Trade[]> {
    return (
      await this.db
        .select()
        .from(trades)
        .where(and(eq(trades.masterAccountId, masterAccountId), eq(trades.masterPositionId, masterPositionId)))
        .orderBy(asc(trades.createdAt))
    ).map(tradeFromRow);
  }

  /** Newest first; `after` = the position (see keyset.ts) of the last row of the previous page. */
  async listTrades(
    userId: string,
    opts: { accountId?: string; before?: Date; after?: string | undefined; limit: number },
  ): Promise<TradeWithPosition[]> {
    const conds = [eq(trades.userId, userId)];
    if (opts.accountId) conds.push(eq(trades.masterAccountId, opts.accountId));
    if (opts.before) conds.push(lt(trades.createdAt, opts.before));
    if (opts.after) conds.push(olderThan(trades.createdAt, trades.id, opts.after));
    return (
      await this.db
        .select({ ...getTableColumns(trades), position: positionOf(trades.createdAt, trades.id) })
        .from(trades)
        .where(and(...conds))
        .orderBy(desc(trades.createdAt), desc(trades.id))
        .limit(opts.limit)
    ).map((r) => ({ ...tradeFromRow(r), position: r.position }));
  }

  /**
   * The fan-out of an order-route trade: the trade moves from pending/unresolved to accepted with every intent
   * in one transaction (one statement for all intents, durable before the first is sent, so a crash cannot lose or
   * double a copy). Returns false and writes nothing when the trade is no longer waiting for its fan-out
   * (the route and the settle loop after a crash can both get here; only one records).
   */
  async recordIntents(
    tradeId: string,
    tradeSet: Partial<NewTrade>,
    intents: NewIntent[],
    evs: NewEvent[] = [],
    items: NewMasterItem[] = [],
  ): Promise<boolean> {
    const recorded = await this.writingItems(
      items.map((it) => it.accountId),
      () =>
        this.db.transaction(async (tx) => {
          const upd = await tx
            .update(trades)
            .set({ ...tradeSetToRow(tradeSet), updatedAt: new Date() })
            .where(and(eq(trades.id, tradeId), inArray(trades.status, ['pending', 'unresolved'])))
            .returning({ id: trades.id, master: trades.masterAccountId });
          if (upd.length === 0) return false;
          await this.fenceMasters(tx, [upd[0]!.master]);
          await insertIntents(tx, tradeId, intents);
          // The watcher may have seen the item first (and since): its view stays.
          if (items.length > 0) await tx.insert(masterItems).values(items.map(masterItemToRow)).onConflictDoNothing();
          if (evs.length > 0) await this.events.append(tx, evs);
          return true;
        }),
      (done) => {
        const at = new Date();
        if (done) for (const it of items) this.items?.insertedIfAbsent(it, at);
      },
    );
    if (recorded) this.recorded(tradeId, intents);
    if (recorded) this.events.notify(evs.map((e) => e.userId));
    return recorded;
  }

  /**
   * A master action seen by the watcher: its trade, every intent, the watcher's new view of the Master item
   * and the events, in one transaction. The trade's unique action id makes a second recording of the same
   * action a no-op: returns false and writes nothing. Given a guard (a copy planned on its group's Slaves as
   * held), it writes nothing and throws GroupMovedError when the group's `settled` version is no longer the guard's.
   */
  async recordAction(
    trade: NewTrade,
    intents: NewIntent[],
    items: NewMasterItem[],
    evs: NewEvent[] = [],
    guard?: GroupGuard,
  ): Promise<boolean> {
    // The hot path (a watcher's fan-out: no fence, its events deferred, one item): one statement, one commit.
    const ids = items.map((it) => it.accountId);
    const follow = (done: boolean) => {
      const at = new Date();
      if (done) for (const it of items) this.items?.upserted(it, at);
    };
    if (!this.fence && evs.length === 0 && items.length <= 1) {
      const once = await this.writingItems(
        ids,
        () => recordActionAtOnce(this.db, trade, intents, items[0], guard),
        follow,
      );
      if (once) this.recorded(trade.id, intents);
      return once;
    }
    const recorded = await this.writingItems(
      ids,
      () =>
        this.db.transaction(async (tx) => {
          await this.fenceMasters(tx, [trade.masterAccountId]);
          if (guard) {
            const [g] = rowsOf<{ ok: boolean }>(
              await tx.execute(sql`select ${settledGuard(guard.groupId, guard.settled)} as ok`),
            );
            if (!g?.ok) throw new GroupMovedError(guard.groupId);
          }
          const ins = await tx
            .insert(trades)
            .values(tradeToRow(trade))
            .onConflictDoNothing()
            .returning({ id: trades.id });
          if (ins.length === 0) return false;
          await insertIntents(tx, trade.id, intents);
          for (const it of items) await upsertItem(tx as unknown as Db, it);
          if (evs.length > 0) await this.events.append(tx, evs);
          return true;
        }),
      follow,
    );
    if (recorded) this.recorded(trade.id, intents);
    if (recorded) this.events.notify(evs.map((e) => e.userId));
    return recorded;
  }

  private recorded(tradeId: string, intents: NewIntent[]): void {
    if (intents.length === 0) return;
    // Bounded: a process that records and never writes an outcome leaves the rest to the sweep.
    if (this.toMove.size >= MAX_TO_MOVE) this.toMove.delete(this.toMove.values().next().value!);
    this.toMove.add(tradeId);
  }

  /**
   * Moves the intents of the trades recorded here so far (see `toMove`) to copy_intents proper. Run after an outcome
   * batch, never inside one: a move that fails (it should not: a tag taken twice) must not undo outcomes. Those
   * trades are then left to the sweep, which reports what it cannot move.
   */
  async moveRecorded(): Promise<void> {
    if (this.toMove.size === 0) return;
    const ids = [...this.toMove];
    for (const id of ids) this.toMove.delete(id);
    await executeNamed(this.db, moveRecent(sql`r.trade_id = any(${pgArray(ids)}::text[])`)).catch(() => undefined);
  }

  /**
   * Moves to copy_intents proper what copy_intents_recent still holds of intents recorded over `olderThanMs` ago (a
   * crash between a record and its move, a failed move, another process's records), at most `limit` rows; returns
   * how many it moved. Safe in every process at once: a row deleted by one move is not returned to another.
   */
  async moveRecentOlderThan(olderThanMs: number, limit = 5000): Promise<number> {
    const res = await this.db.execute(
      sql`${moveRecent(sql`r.id in (select id from copy_intents_recent where created_at < now() - ${olderThanMs}::int * interval '1 millisecond' order by id limit ${limit})`)} returning id`,
    );
    return (Array.isArray(res) ? res : ((res as unknown as { rows: unknown[] }).rows ?? [])).length;
  }

  /**
   * Vacuums copy_intents_recent, whose every row is deleted within seconds: without it the table grows until the
   * next vacuum (10 minutes on the embedded store, which has no autovacuum), and every read of copy_intents scans it.
   * SKIP_LOCKED: a vacuum another process runs is enough.
   */
  async vacuumRecent(): Promise<void> {
    await this.db.execute(sql`vacuum (skip_locked) copy_intents_recent`);
  }

  async actionRecorded(actionId: string): Promise<boolean> {
    const [row] = await this.db.select({ id: trades.id }).from(trades).where(eq(trades.actionId, actionId)).limit(1);
    return Boolean(row);
  }

  async updateIntent(id: string, u: IntentUpdate, evs: NewEvent[] = []): Promise<void> {
    if (this.fence) return this.applyOutcomes([{ intentId: id, update: u, events: evs }]);
    await this.withEvents(evs, async (db) => {
      await moveIntent(db, id, u, new Date());
    });
  }

  /**
   * Many settled writes in one transaction: intent updates, link changes and their events. Then the recorded intents
   * move to copy_intents proper, unless `moveAfter` is false: the caller (the outcome writer) moves them itself with
   * `moveRecorded`, once a burst of batches is written.
   */
  async applyOutcomes(writes: OutcomeWrite[], { moveAfter = true }: { moveAfter?: boolean } = {}): Promise<void> {
    if (writes.length === 0) return;
    const evs = writes.flatMap((w) => w.events ?? []);
    await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      await this.fenceOutcomes(
        tx,
        writes.flatMap((w) => (w.intentId && w.update ? [w.intentId] : [])),
        writes.flatMap((w) => (w.trade ? [w.trade.id] : [])),
      );
      const now = new Date();
      for (const w of writes)
        if (w.trade)
          await db
            .update(trades)
            .set({ ...tradeSetToRow(w.trade.set), updatedAt: now })
            .where(eq(trades.id, w.trade.id));
      // Set-based: a fan-out's outcomes are a fixed handful of statements whatever the number of Slaves.
      await moveIntents(
        tx,
        writes.flatMap((w) => (w.intentId && w.update ? [{ id: w.intentId, update: w.update }] : [])),
        now,
      );
      await applyLinks(
        tx,
        writes.flatMap((w) => w.links ?? []),
        now,
      );
      if (evs.length > 0) await this.events.append(tx, evs);
    });
    this.events.notify(evs.map((e) => e.userId));
    if (moveAfter) await this.moveRecorded();
  }

  /** Trades whose intents are durable but whose move to accepted (and its events) was not written: a crash in between. */
  async tradesInStatus(status: string): Promise<Trade[]> {
    return (await this.db.select().from(trades).where(eq(trades.status, status)).orderBy(asc(trades.createdAt))).map(
      tradeFromRow,
    );
  }

  async intentById(id: string): Promise<CopyIntent | null> {
    const [row] = await this.db.select().from(copyIntents).where(eq(copyIntents.id, id)).limit(1);
    return row ? intentFromRow(row) : null;
  }

  async intentsOfTrade(tradeId: string): Promise<CopyIntent[]> {
    return (
      await this.db
        .select()
        .from(copyIntents)
        .where(eq(copyIntents.tradeId, tradeId))
        .orderBy(asc(copyIntents.createdAt), asc(copyIntents.id))
    ).map(intentFromRow);
  }

  async intentsOfTrades(tradeIds: string[]): Promise<CopyIntent[]> {
    if (tradeIds.length === 0) return [];
    return (await this.db.select().from(copyIntents).where(inArray(copyIntents.tradeId, tradeIds))).map(intentFromRow);
  }

  async intentsInState(state: IntentState): Promise<CopyIntent[]> {
    return (
      await this.db.select().from(copyIntents).where(eq(copyIntents.state, state)).orderBy(asc(copyIntents.createdAt))
    ).map(intentFromRow);
  }

  /**
   * Intents whose broker write has no known outcome (planned or sent when the process died, or unresolved), with
   * their trade. The few intents in those states first, through their index alone, then their trades and Slaves:
   * joined in one statement, the embedded store (it keeps no statistics) planned it Slave by Slave through every
   * intent each Slave ever had, a cost that grew with the ledger (17-45 ms at 90,000 intents, every 2 s from the
   * settle loop).
   */
  async unsettledIntents(): Promise<Array<{ intent: CopyIntent; trade: Trade }>> {
    const intents = (
      await this.db
        .select()
        .from(copyIntents)
        .where(inArray(copyIntents.state, ['planned', 'sent', 'unresolved']))
        .orderBy(asc(copyIntents.createdAt))
    ).map(intentFromRow);
    if (intents.length === 0) return [];
    const [tradeRows, live] = await Promise.all([
      this.db
        .select()
        .from(trades)
        .where(inArray(trades.id, [...new Set(intents.map((i) => i.tradeId))])),
      // A removed Slave's writes keep the state they had (the history says what was known); nothing asks its broker.
      this.db
        .select({ id: accounts.id })
        .from(accounts)
        .where(
          and(inArray(accounts.id, [...new Set(intents.map((i) => i.slaveAccountId))]), isNull(accounts.removedAt)),
        ),
    ]);
    const byId = new Map(tradeRows.map((r) => [r.id, tradeFromRow(r)] as const));
    const liveIds = new Set(live.map((a) => a.id));
    return intents.flatMap((intent) => {
      const trade = byId.get(intent.tradeId);
      return trade && liveIds.has(intent.slaveAccountId) ? [{ intent, trade }] : [];
    });
  }

  async intentsOfAccount(
    slaveAccountId: string,
    opts: { before?: Date; after?: string | undefined; limit: number },
  ): Promise<IntentWithPosition[]> {
    const conds = [eq(copyIntents.slaveAccountId, slaveAccountId)];
    if (opts.before) conds.push(lt(copyIntents.createdAt, opts.before));
    if (opts.after) conds.push(olderThan(copyIntents.createdAt, copyIntents.id, opts.after));
    return (
      await this.db
        .select({ ...getTableColumns(copyIntents), position: positionOf(copyIntents.createdAt, copyIntents.id) })
        .from(copyIntents)
        .where(and(...conds))
        .orderBy(desc(copyIntents.createdAt), desc(copyIntents.id))
        .limit(opts.limit)
    ).map((r) => ({ ...intentFromRow(r), position: r.position }));
  }

  /** Every intent of one Slave for one Master position (opens, follow-ups, heals), oldest first. */
  async intentsForMasterPosition(
    masterAccountId: string,
    masterPositionId: string,
    slaveAccountId?: string,
  ): Promise<CopyIntent[]> {
    const conds = [eq(trades.masterAccountId, masterAccountId), eq(trades.masterPositionId, masterPositionId)];
    if (slaveAccountId) conds.push(eq(copyIntents.slaveAccountId, slaveAccountId));
    const rows = await this.db
      .select({ i: copyIntents })
      .from(copyIntents)
      .innerJoin(trades, eq(copyIntents.tradeId, trades.id))
      .where(and(...conds))
      .orderBy(asc(copyIntents.createdAt));
    return rows.map((r) => intentFromRow(r.i));
  }

  /** Intents of one Slave carrying any of these tags now or in an earlier attempt. */
  async intentsByTags(slaveAccountId: string, tags: string[]): Promise<CopyIntent[]> {
    if (tags.length === 0) return [];
    const inPrev = tags.map((t) => sql`${copyIntents.prevTags} @> ${JSON.stringify([t])}::jsonb`);
    return (
      await this.db
        .select()
        .from(copyIntents)
        .where(and(eq(copyIntents.slaveAccountId, slaveAccountId), or(inArray(copyIntents.tag, tags), ...inPrev)))
    ).map(intentFromRow);
  }

  /**
   * The intent that carries (or carried, in an earlier attempt) this tag, in any account. The current tag is
   * indexed; earlier tags are searched only for strings shaped like our correlation tags.
   */
  async intentByAnyTag(tag: string): Promise<CopyIntent | null> {
    return (await this.intentByTag(tag)) ?? this.intentByEarlierTag(tag);
  }

  /** The intent carrying this tag now (indexed). */
  async intentByTag(tag: string): Promise<CopyIntent | null> {
    const [row] = await this.db.select().from(copyIntents).where(eq(copyIntents.tag, tag)).limit(1);
    return row ? intentFromRow(row) : null;
  }

  /** The intent that carried this tag in an earlier attempt; not searched (null) unless it is shaped like ours. */
  async intentByEarlierTag(tag: string): Promise<CopyIntent | null> {
    if (!mayBeOurTag(tag)) return null;
    const [prev] = await this.db
      .select()
      .from(copyIntents)
      .where(sql`${copyIntents.prevTags} @> ${JSON.stringify([tag])}::jsonb`)
      .limit(1);
    return prev ? intentFromRow(prev) : null;
  }

  // ---- links --------------------------------------------------------------------------------------

  async insertLink(l: NewLink): Promise<void> {
    await this.db.insert(positionLinks).values(linkToRow(l)).onConflictDoNothing();
  }

  async applyLinkChanges(changes: LinkChange[], evs: NewEvent[] = []): Promise<void> {
    await this.withEvents(evs, async (db) => {
      for (const c of changes) await applyLink(db, c);
    });
  }

  async openLinksOfMaster(
    masterAccountId: string,
    masterPositionId: string,
    kind: LinkKind = 'position',
  ): Promise<PositionLink[]> {
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(and(linksOfMasterPosition(masterAccountId, masterPositionId, kind), eq(positionLinks.open, true)))
        .orderBy(asc(positionLinks.createdAt))
    ).map(linkFromRow);
  }

  /** Open and closed: a link closed as user_closed forbids copying that Master position to that Slave again. */
  async linksOfMaster(
    masterAccountId: string,
    masterPositionId: string,
    kind: LinkKind = 'position',
  ): Promise<PositionLink[]> {
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(linksOfMasterPosition(masterAccountId, masterPositionId, kind))
    ).map(linkFromRow);
  }

  async openLinksOfMasterAccount(masterAccountId: string): Promise<PositionLink[]> {
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(and(eq(positionLinks.masterAccountId, masterAccountId), eq(positionLinks.open, true)))
    ).map(linkFromRow);
  }

  async linksOfMasterAccount(masterAccountId: string): Promise<PositionLink[]> {
    return (await this.db.select().from(positionLinks).where(eq(positionLinks.masterAccountId, masterAccountId))).map(
      linkFromRow,
    );
  }

  /**
   * What a reconcile pass needs of a Master's links: the open ones, and every link (open or closed) of the Master
   * positions open now. Not the closed links of positions gone on both sides: one row per copy for ever, they grow
   * with the service's age (a 30-minute soak at 100 Slaves made 45,000, a 1.3-1.9 s read each pass).
   */
  async linksToReconcile(masterAccountId: string, openMasterPositionIds: string[]): Promise<PositionLink[]> {
    const ofOpen = openMasterPositionIds.length ? [inArray(positionLinks.masterPositionId, openMasterPositionIds)] : [];
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(and(eq(positionLinks.masterAccountId, masterAccountId), or(eq(positionLinks.open, true), ...ofOpen)))
    ).map(linkFromRow);
  }

  /** The position links, open or closed, of these Slave positions (one Slave). */
  async linksOfSlavePositions(slaveAccountId: string, slavePositionIds: string[]): Promise<PositionLink[]> {
    if (slavePositionIds.length === 0) return [];
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(
          and(
            eq(positionLinks.slaveAccountId, slaveAccountId),
            eq(positionLinks.kind, 'position'),
            inArray(positionLinks.slavePositionId, slavePositionIds),
          ),
        )
    ).map(linkFromRow);
  }

  async openLinksOfSlave(slaveAccountId: string): Promise<PositionLink[]> {
    return (
      await this.db
        .select()
        .from(positionLinks)
        .where(and(eq(positionLinks.slaveAccountId, slaveAccountId), eq(positionLinks.open, true)))
    ).map(linkFromRow);
  }

  /** Closes every open link of these Slave accounts (a panic-close flattening them); returns how many. */
  async closeOpenLinksOfSlaves(slaveAccountIds: string[], reason: string): Promise<number> {
    if (slaveAccountIds.length === 0) return 0;
    const rows = await this.db
      .update(positionLinks)
      .set({ open: false, closedReason: reason, closedAt: new Date() })
      .where(and(inArray(positionLinks.slaveAccountId, slaveAccountIds), eq(positionLinks.open, true)))
      .returning({ id: positionLinks.id });
    return rows.length;
  }

  async linkById(id: string): Promise<PositionLink | null> {
    const [row] = await this.db.select().from(positionLinks).where(eq(positionLinks.id, id)).limit(1);
    return row ? linkFromRow(row) : null;
  }

  async closeLink(id: string, reason: string, evs: NewEvent[] = []): Promise<void> {
    await this.withEvents(evs, async (db) => {
      await db
        .update(positionLinks)
        .set({ open: false, closedReason: reason, closedAt: new Date() })
        .where(eq(positionLinks.id, id));
    });
  }

  async setLinkVolume(id: string, volume: Decimal): Promise<void> {
    await this.db
      .update(positionLinks)
      .set({ volume: decText(volume) })
      .where(eq(positionLinks.id, id));
  }

  // ---- the watcher's view of Master items -----------------------------------------------------------

  async masterItems(accountId: string, opts: { openOnly?: boolean } = {}): Promise<MasterItem[]> {
    // Closed items are not held in memory (see MasterItemsCache): all of them is a read of the table.
    if (this.items && opts.openOnly) return this.items.openItems(accountId, () => this.readItems(accountId));
    return this.readItems(accountId, opts);
  }

  private async readItems(accountId: string, opts: { openOnly?: boolean } = {}): Promise<MasterItem[]> {
    const conds = [eq(masterItems.accountId, accountId)];
    if (opts.openOnly) conds.push(eq(masterItems.open, true));
    return (
      await this.db
        .select()
        .from(masterItems)
        .where(and(...conds))
    ).map(masterItemFromRow);
  }

  async masterItem(accountId: string, kind: LinkKind, itemId: string): Promise<MasterItem | null> {
    if (this.items)
      return this.items.item(
        accountId,
        kind,
        itemId,
        () => this.readItems(accountId),
        () => this.readItem(accountId, kind, itemId),
      );
    return this.readItem(accountId, kind, itemId);
  }

  private async readItem(accountId: string, kind: LinkKind, itemId: string): Promise<MasterItem | null> {
    const [row] = await this.db
      .select()
      .from(masterItems)
      .where(and(eq(masterItems.accountId, accountId), eq(masterItems.kind, kind), eq(masterItems.itemId, itemId)))
      .limit(1);
    return row ? masterItemFromRow(row) : null;
  }

  /**
   * A new Master item's reads before its copy is planned, in one statement: the item as the watcher knows it, and
   * the trade and the copy intent that carry `tag` now (each unique, so the left joins give one row). Three
   * statements, even posted at once, ran one after another in the embedded store's worker, each built by drizzle
   * on the event loop while the Master's fill waited. The item comes from memory on the embedded store, and
   * `tag` null (the caller knows no trade or intent can carry it) reads no trade or intent: then no statement at all.
   */
  async itemAndTag(
    accountId: string,
    kind: LinkKind,
    itemId: string,
    tag: string | null,
  ): Promise<{ item: MasterItem | null; trade: Trade | null; intent: CopyIntent | null }> {
    if (this.items || tag === null) {
      const [item, held] = await Promise.all([
        this.masterItem(accountId, kind, itemId),
        tag === null ? { trade: null, intent: null } : this.tagHolders(tag),
      ]);
      return { item, ...held };
    }
    const [row] = await this.db
      .select({ item: masterItems, trade: trades, intent: copyIntents })
      .from(sql`(select 1) as one`)
      .leftJoin(
        masterItems,
        and(eq(masterItems.accountId, accountId), eq(masterItems.kind, kind), eq(masterItems.itemId, itemId)),
      )
      .leftJoin(trades, eq(trades.tag, tag))
      .leftJoin(copyIntents, eq(copyIntents.tag, tag));
    return {
      item: row?.item ? masterItemFromRow(row.item) : null,
      trade: row?.trade ? tradeFromRow(row.trade) : null,
      intent: row?.intent ? intentFromRow(row.intent) : null,
    };
  }

  /** The trade and the copy intent that carry `tag` now, in one statement. */
  private async tagHolders(tag: string): Promise<{ trade: Trade | null; intent: CopyIntent | null }> {
    const [row] = await this.db
      .select({ trade: trades, intent: copyIntents })
      .from(sql`(select 1) as one`)
      .leftJoin(trades, eq(trades.tag, tag))
      .leftJoin(copyIntents, eq(copyIntents.tag, tag));
    return {
      trade: row?.trade ? tradeFromRow(row.trade) : null,
      intent: row?.intent ? intentFromRow(row.intent) : null,
    };
  }

  async upsertMasterItem(it: NewMasterItem): Promise<void> {
    await this.writingItems(
      [it.accountId],
      () => upsertItem(this.db, it),
      () => this.items?.upserted(it, new Date()),
    );
  }
}

/**
 * Writes an intent's new state only from a state the machine allows it from (domain/intent.ts); otherwise
 * throws IntentTransitionError, which rolls the whole transaction back (its links and events with it).
 */
async function moveIntent(db: Db, id: string, u: IntentUpdate, now: Date): Promise<void> {
  for (let tries = 1; ; tries++) {
    const moved = await db
      .update(copyIntents)
      .set({ ...intentSetToRow(u), updatedAt: now })
      .where(and(eq(copyIntents.id, id), inArray(copyIntents.state, allowedFrom(u.state))))
      .returning({ id: copyIntents.id });
    if (moved.length > 0) return;
    const [cur] = await db
      .select({ state: copyIntents.state })
      .from(copyIntents)
      .where(eq(copyIntents.id, id))
      .limit(1);
    const state = (cur?.state as IntentState | undefined) ?? null;
    if (!movedUnder(state, u.state, tries)) throw new IntentTransitionError(id, u.state, state);
  }
}

async function upsertItem(db: Db, it: NewMasterItem): Promise<void> {
  const row = masterItemToRow(it);
  const { accountId: _a, kind: _k, itemId: _i, ...rest } = row;
  await db
    .insert(masterItems)
    .values(row)
    .onConflictDoUpdate({
      target: [masterItems.accountId, masterItems.kind, masterItems.itemId],
      set: { ...rest, updatedAt: new Date() },
    });
}

const byKey = (k: LinkKey) =>
  and(
    eq(positionLinks.slaveAccountId, k.slaveAccountId),
    eq(positionLinks.kind, k.kind),
    eq(positionLinks.slavePositionId, k.slavePositionId),
  );

async function applyLink(db: Db, l: LinkChange): Promise<void> {
  switch (l.op) {
    case 'upsert':
      await db
        .insert(positionLinks)
        .values(linkToRow(l.link))
        .onConflictDoUpdate({
          target: [positionLinks.slaveAccountId, positionLinks.kind, positionLinks.slavePositionId],
          set: { volume: sql`coalesce(${positionLinks.volume}, 0) + excluded.volume` },
          setWhere: sql`${positionLinks.open} = true`,
        });
      return;
    case 'close':
      await db
        .update(positionLinks)
        .set({ open: false, closedReason: l.reason, closedAt: new Date() })
        .where(and(byKey(l.key), eq(positionLinks.open, true)));
      return;
    case 'adjust':
      await db
        .update(positionLinks)
        .set({ volume: sql`greatest(coalesce(${positionLinks.volume}, 0) + ${decText(l.by)}::numeric, 0)` })
        .where(and(byKey(l.key), eq(positionLinks.open, true)));
      return;
  }
}

/** The links of one Master position (or pending order, by kind), open or closed. */
function linksOfMasterPosition(masterAccountId: string, masterPositionId: string, kind: LinkKind) {
  return and(
    eq(positionLinks.masterAccountId, masterAccountId),
    eq(positionLinks.masterPositionId, masterPositionId),
    eq(positionLinks.kind, kind),
  );
}
