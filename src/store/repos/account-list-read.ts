import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { accounts } from '../schema.js';
import type { Account } from '../../domain/account.js';
import { rowsOf } from '../rows-of.js';
import { createdAtKey, epochMs, toAccount } from './account-row.js';

/** Accounts a chunk of the answer holds: one JSON text each, parsed and mapped in one turn of the event loop. */
export const LIST_CHUNK = 1000;

/**
 * One account as the statements send it: `toAccount`'s columns in this order, timestamps as epoch milliseconds, then
 * its created_at to the microsecond as sortable text (the list's order).
 */
type Tuple = [
  id: string,
  userId: string,
  platform: string,
  role: string,
  status: string,
  statusReason: string | null,
  name: string,
  groupId: string | null,
  brokerAccountId: string,
  brokerAccountNumber: string,
  brokerName: string | null,
  environment: string | null,
  currency: string | null,
  brokerIdentity: string | null,
  health: unknown,
  balance: string | null,
  equity: string | null,
  removedAt: number | null,
  createdAt: number,
  updatedAt: number,
  /** The page read's only. */
  createdKey?: string,
];

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

/** The columns of a Tuple, as the inner select of both reads names them. */
const tupleSource = sql`
      select ${accounts.id} as id, ${accounts.userId} as user_id, ${accounts.platform} as platform,
        ${accounts.role} as role, ${accounts.status} as status, ${accounts.statusReason} as status_reason,
        ${accounts.name} as name, ${accounts.groupId} as group_id, ${accounts.brokerAccountId} as broker_account_id,
        ${accounts.brokerAccountNumber} as broker_account_number, ${accounts.brokerName} as broker_name,
        ${accounts.environment} as environment, ${accounts.currency} as currency,
        ${accounts.brokerIdentity} as broker_identity, ${accounts.health} as health,
        ${accounts.balance}::text as balance, ${accounts.equity}::text as equity,
        ${epochMs(accounts.removedAt)} as removed_ms, ${epochMs(accounts.createdAt)} as created_ms,
        ${epochMs(accounts.updatedAt)} as updated_ms`;
const tupleArray = sql`json_build_array(id, user_id, platform, role, status, status_reason, name, group_id,
      broker_account_id, broker_account_number, broker_name, environment, currency, broker_identity, health,
      balance, equity, removed_ms, created_ms, updated_ms`;

/**
 * The accounts `where` selects, in the list's order (created_at, then id), read in one statement (one snapshot) as
 * JSON texts of LIST_CHUNK accounts each, parsed and mapped one per turn of the event loop.
 *
 * A user's 10,000 accounts through the driver and the query builder's row mapping took 0.5-0.9 s and held the event
 * loop 80-260 ms at once (PGlite parses each of the 200,000 fields in JavaScript, then the builder maps each again);
 * as ten texts the driver passes ten fields, and this thread never works longer than one chunk at a time.
 */
export async function readAccountList(db: Db, where: SQL): Promise<Account[]> {
  const n = sql.raw(String(LIST_CHUNK));
  const answer = await db.execute(sql`
    select json_agg(${tupleArray}) order by n)::text as chunk
    from (${tupleSource},
        row_number() over (order by ${accounts.createdAt}, ${accounts.id}) - 1 as n
      from ${accounts} where ${where}
    ) t
    group by n / ${n} order by n / ${n}`);
  const out: Account[] = [];
  for (const [i, { chunk }] of rowsOf<{ chunk: string }>(answer).entries()) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const t of JSON.parse(chunk) as Tuple[]) out.push(fromTuple(t));
  }
  return out;
}

/** One account and its place in the list's order (created_at to the microsecond, then id). */
export interface Keyed {
  account: Account;
  createdKey: string;
}

/**
 * At most `limit` of the accounts `where` selects whose id is above `after`, in id order (the paging order): one
 * statement, one JSON text. A page of a user's list without reading the rest of it (the whole list of 10,000
 * accounts is a 0.25-0.6 s statement in the embedded store, which runs one statement at a time).
 *
 * Ids compare here as the database's collation orders them, and in the API's cursors as JavaScript strings: the same
 * order, since every id is a fixed-width `prefix_` then lower-case letters and digits (domain/ids.ts), which every
 * collation orders by code unit.
 */
export async function readAccountPage(db: Db, where: SQL, after: string | undefined, limit: number): Promise<Keyed[]> {
  const answer = await db.execute(sql`
    select json_agg(${tupleArray}, created_key) order by id)::text as chunk
    from (${tupleSource}, ${createdAtKey} as created_key
      from ${accounts} where ${where}${after === undefined ? sql`` : sql` and ${accounts.id} > ${after}`}
      order by ${accounts.id} limit ${sql.raw(String(Math.max(0, Math.floor(limit))))}
    ) t`);
  const chunk = rowsOf<{ chunk: string | null }>(answer)[0]?.chunk;
  return chunk ? (JSON.parse(chunk) as Tuple[]).map((t) => ({ account: fromTuple(t), createdKey: t[20]! })) : [];
}

function fromTuple(t: Tuple): Account {
  return toAccount({
    id: t[0],
    userId: t[1],
    platform: t[2],
    role: t[3],
    status: t[4],
    statusReason: t[5],
    name: t[6],
    groupId: t[7],
    brokerAccountId: t[8],
    brokerAccountNumber: t[9],
    brokerName: t[10],
    environment: t[11],
    currency: t[12],
    brokerIdentity: t[13],
    health: t[14],
    balance: t[15],
    equity: t[16],
    removedAt: date(t[17]),
    createdAt: new Date(t[18]),
    updatedAt: new Date(t[19]),
  });
}
