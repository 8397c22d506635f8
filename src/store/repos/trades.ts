import { and, asc, desc, eq, inArray, lt } from 'drizzle-orm';
import type { Db } from '../db.js';
import { copyIntents, positionLinks, trades } from '../schema.js';
import type { IntentState } from '../../domain/intent.js';
import type { Side } from '../../domain/types.js';
import type { EventsRepo, NewEvent } from './events.js';

export type TradeRow = typeof trades.$inferSelect;
export type IntentRow = typeof copyIntents.$inferSelect;
export type NewTrade = typeof trades.$inferInsert;
export type NewIntent = typeof copyIntents.$inferInsert;
export type LinkRow = typeof positionLinks.$inferSelect;

export interface IntentUpdate {
  state: IntentState;
  outcome?: unknown;
  brokerOrderId?: string | null;
  brokerPositionId?: string | null;
  filledVolume?: string | null;
  fillPrice?: string | null;
  slippage?: string | null;
  latency?: Record<string, number>;
  attempts?: number;
  skipReason?: string | null;
}

/** Trades, the copy ledger (intents) and position links. */
export class TradesRepo {
  constructor(private readonly db: Db, private readonly events: EventsRepo) {}

  /** Runs a write and appends its events in one transaction, then wakes the event consumers. */
  private async withEvents(evs: NewEvent[], write: (tx: Db) => Promise<void>): Promise<void> {
    if (evs.length === 0) return write(this.db);
    await this.db.transaction(async (tx) => {
      await write(tx as unknown as Db);
      await this.events.append(tx, evs);
    });
    this.events.notify(evs.map((e) => e.userId));
  }

  async insertTrade(t: NewTrade): Promise<TradeRow> {
    const [row] = await this.db.insert(trades).values(t).returning();
    return row!;
  }

  async updateTrade(id: string, set: Partial<NewTrade>, evs: NewEvent[] = []): Promise<void> {
    await this.withEvents(evs, async (db) => {
      await db.update(trades).set({ ...set, updatedAt: new Date() }).where(eq(trades.id, id));
    });
  }

  async ownedTrade(userId: string, id: string): Promise<TradeRow | null> {
    const [row] = await this.db.select().from(trades).where(and(eq(trades.id, id), eq(trades.userId, userId))).limit(1);
    return row ?? null;
  }

  async listTrades(userId: string, opts: { accountId?: string; before?: Date; limit: number }): Promise<TradeRow[]> {
    const conds = [eq(trades.userId, userId)];
    if (opts.accountId) conds.push(eq(trades.masterAccountId, opts.accountId));
    if (opts.before) conds.push(lt(trades.createdAt, opts.before));
    return this.db.select().from(trades).where(and(...conds)).orderBy(desc(trades.createdAt)).limit(opts.limit);
  }

  /**
   * All intents of one master action in ONE statement, in the same transaction as the trade's update:
   * they are durable before the first is sent, so a crash cannot lose or double a copy.
   */
  async recordIntents(tradeId: string, tradeSet: Partial<NewTrade>, intents: NewIntent[], evs: NewEvent[] = []): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.update(trades).set({ ...tradeSet, updatedAt: new Date() }).where(eq(trades.id, tradeId));
      if (intents.length > 0) await tx.insert(copyIntents).values(intents);
      if (evs.length > 0) await this.events.append(tx, evs);
    });
    this.events.notify(evs.map((e) => e.userId));
  }

  async updateIntent(id: string, u: IntentUpdate, evs: NewEvent[] = []): Promise<void> {
    await this.withEvents(evs, async (db) => {
      await db.update(copyIntents).set({ ...u, updatedAt: new Date() }).where(eq(copyIntents.id, id));
    });
  }

  async intentsOfTrade(tradeId: string): Promise<IntentRow[]> {
    return this.db.select().from(copyIntents).where(eq(copyIntents.tradeId, tradeId)).orderBy(asc(copyIntents.createdAt), asc(copyIntents.id));
  }

  async intentsOfTrades(tradeIds: string[]): Promise<IntentRow[]> {
    if (tradeIds.length === 0) return [];
    return this.db.select().from(copyIntents).where(inArray(copyIntents.tradeId, tradeIds));
  }

  async intentsInState(state: IntentState): Promise<IntentRow[]> {
    return this.db.select().from(copyIntents).where(eq(copyIntents.state, state)).orderBy(asc(copyIntents.createdAt));
  }

  async intentsOfAccount(slaveAccountId: string, opts: { before?: Date; limit: number }): Promise<IntentRow[]> {
    const conds = [eq(copyIntents.slaveAccountId, slaveAccountId)];
    if (opts.before) conds.push(lt(copyIntents.createdAt, opts.before));
    return this.db.select().from(copyIntents).where(and(...conds)).orderBy(desc(copyIntents.createdAt)).limit(opts.limit);
  }

  async insertLink(l: typeof positionLinks.$inferInsert): Promise<void> {
    await this.db.insert(positionLinks).values(l).onConflictDoNothing();
  }

  async openLinksOfMaster(masterAccountId: string, masterPositionId: string): Promise<LinkRow[]> {
    return this.db.select().from(positionLinks)
      .where(and(eq(positionLinks.masterAccountId, masterAccountId), eq(positionLinks.masterPositionId, masterPositionId), eq(positionLinks.open, true)));
  }

  async openLinksOfSlave(slaveAccountId: string): Promise<LinkRow[]> {
    return this.db.select().from(positionLinks).where(and(eq(positionLinks.slaveAccountId, slaveAccountId), eq(positionLinks.open, true)));
  }

  async closeLink(id: string, reason: string): Promise<void> {
    await this.db.update(positionLinks).set({ open: false, closedReason: reason, closedAt: new Date() }).where(eq(positionLinks.id, id));
  }
}

export const sideOf = (s: string): Side => (s === 'sell' ? 'sell' : 'buy');
