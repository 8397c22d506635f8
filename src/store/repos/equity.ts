import { and, asc, eq, gte, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { equitySnapshots } from '../schema.js';
import type { Decimal } from '../../domain/decimal.js';

export interface EquitySnapshot {
  accountId: string;
  at: Date;
  balance: Decimal;
  equity: Decimal;
}

/** One point of a downsampled series: the last snapshot of its time bucket. */
export interface EquityPoint {
  at: Date;
  balance: string;
  equity: string;
}

/** Balance and equity over time per account (written by the health monitor, read by the equity-history route). */
export class EquityRepo {
  constructor(private readonly db: Db) {}

  /** One statement for a whole monitor round; a second snapshot at the same instant is dropped. */
  async insertMany(rows: EquitySnapshot[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insert(equitySnapshots)
      .values(
        rows.map((r) => ({
          accountId: r.accountId,
          at: r.at,
          balance: r.balance.toString(),
          equity: r.equity.toString(),
        })),
      )
      .onConflictDoNothing();
  }

  /** Deletes snapshots older than `before`; the number removed. */
  async prune(before: Date): Promise<number> {
    return (
      await this.db
        .delete(equitySnapshots)
        .where(lt(equitySnapshots.at, before))
        .returning({ a: equitySnapshots.accountId })
    ).length;
  }

  /**
   * The account's snapshots in [from, to], at most one per `bucketMs` (the last of each bucket: balance is a
   * step function, and the last value is one that really was, where an average would not be).
   */
  async series(accountId: string, from: Date, to: Date, bucketMs: number): Promise<EquityPoint[]> {
    // A literal (an integer we computed), so GROUP BY is one expression rather than two parameters the server cannot equate.
    const bucket = sql<number>`floor(extract(epoch from ${equitySnapshots.at}) * 1000 / ${sql.raw(String(Math.max(1, Math.trunc(bucketMs))))})`;
    const rows = await this.db
      .select({
        at: sql<Date>`max(${equitySnapshots.at})`.mapWith((v: string | Date) => new Date(v)),
        balance: sql<string>`(array_agg(${equitySnapshots.balance} order by ${equitySnapshots.at} desc))[1]`,
        equity: sql<string>`(array_agg(${equitySnapshots.equity} order by ${equitySnapshots.at} desc))[1]`,
      })
      .from(equitySnapshots)
      .where(and(eq(equitySnapshots.accountId, accountId), gte(equitySnapshots.at, from), lte(equitySnapshots.at, to)))
      .groupBy(bucket)
      .orderBy(asc(sql`max(${equitySnapshots.at})`));
    return rows.map((r) => ({ at: r.at, balance: String(r.balance), equity: String(r.equity) }));
  }
}
