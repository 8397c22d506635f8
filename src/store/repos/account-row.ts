import { type AnyColumn, getTableColumns, isNull, type SQL, sql } from 'drizzle-orm';
import { accounts } from '../schema.js';
import { decOrNull } from '../../domain/decimal.js';
import type { Account } from '../../domain/account.js';
import type { AccountStatus, Health, Platform, Role } from '../../domain/types.js';

type AccountRow = typeof accounts.$inferSelect;

/** Rows the user still has: a removed connection only lives on in the history (trades, ledger, events). */
export const live = isNull(accounts.removedAt);

/**
 * Every column an Account is built from: all but the credentials, which are only read where they are opened, and
 * the row's version (`rev`), which only the group read compares.
 */
const { credentialsEnc: _credentials, rev: _rev, ...columns } = getTableColumns(accounts);
export const accountColumns = columns;

/**
 * A timestamp as epoch milliseconds, the Date the driver would have made: truncated to the millisecond first, then
 * rounded (extract is a float before PostgreSQL 14). For reads that send rows as one JSON text.
 */
export const epochMs = (col: AnyColumn | SQL) =>
  sql<number>`floor(extract(epoch from date_trunc('milliseconds', ${col})) * 1000 + 0.5)`;

/** created_at to the microsecond as fixed-width text: sorts as the timestamp does. */
export const createdAtKey = sql<string>`to_char(${accounts.createdAt} at time zone 'UTC', 'YYYYMMDDHH24MISSUS')`;

export const toAccount = (r: Omit<AccountRow, 'credentialsEnc' | 'rev'>): Account => ({
  id: r.id,
  userId: r.userId,
  platform: r.platform as Platform,
  role: r.role as Role,
  status: r.status as AccountStatus,
  statusReason: r.statusReason,
  name: r.name,
  groupId: r.groupId,
  brokerAccountId: r.brokerAccountId,
  brokerAccountNumber: r.brokerAccountNumber,
  brokerName: r.brokerName,
  environment: r.environment,
  currency: r.currency,
  brokerIdentity: r.brokerIdentity,
  health: r.health as Health,
  balance: decOrNull(r.balance),
  equity: decOrNull(r.equity),
  removedAt: r.removedAt,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});
