import { and, asc, eq, gte, inArray } from 'drizzle-orm';
import type { Db } from '../db.js';
import { copyIntents, trades } from '../schema.js';
import { intentFromRow, tradeFromRow } from '../ledger-mappers.js';
import type { CopyIntent, Trade } from '../../domain/ledger-types.js';

/** What a what-if replay reads of a period (docs/what-if.md); it reads only, never writes. */
export interface ReplayHistory {
  rows: Array<{ intent: CopyIntent; trade: Trade }>;
  /** The trades of the rows' Masters in the period: where their positions went. */
  masterTrades: Trade[];
}

export class ReplayHistoryRepo {
  constructor(private readonly db: Db) {}

  /** A Slave's ledger rows planned since `since`, each with its Master's trade, in the order they were planned. */
  async read(slaveAccountId: string, since: Date): Promise<ReplayHistory> {
    const joined = await this.db
      .select({ intent: copyIntents, trade: trades })
      .from(copyIntents)
      .innerJoin(trades, eq(trades.id, copyIntents.tradeId))
      .where(and(eq(copyIntents.slaveAccountId, slaveAccountId), gte(copyIntents.createdAt, since)))
      .orderBy(asc(copyIntents.createdAt), asc(copyIntents.id));
    const rows = joined.map((r) => ({ intent: intentFromRow(r.intent), trade: tradeFromRow(r.trade) }));
    const masters = [...new Set(rows.map((r) => r.trade.masterAccountId))];
    const masterTrades =
      masters.length === 0
        ? []
        : (
            await this.db
              .select()
              .from(trades)
              .where(and(inArray(trades.masterAccountId, masters), gte(trades.createdAt, since)))
          ).map(tradeFromRow);
    return { rows, masterTrades };
  }
}
