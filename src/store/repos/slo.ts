import { and, asc, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import { decOrNull } from '../../domain/decimal.js';
import type { SloRow } from '../../domain/slo/levels.js';
import type { Db } from '../db.js';
import { accounts, copyIntents, copierGroups, sloBreaches, sloTargets, trades } from '../schema.js';
import type { EventsRepo, NewEvent } from './events.js';

export interface SloTargetRow {
  groupId: string;
  userId: string;
  target: unknown;
  updatedAt: Date;
}

export interface SloBreachRow {
  accountId: string;
  metric: string;
  groupId: string;
  userId: string;
  value: unknown;
  since: Date;
}

/** Service-level targets per copier group, the breaches in progress, and the ledger as the levels read it. */
export class SloRepo {
  constructor(
    private readonly db: Db,
    private readonly events: EventsRepo,
  ) {}

  async target(groupId: string): Promise<SloTargetRow | null> {
    const [r] = await this.db.select().from(sloTargets).where(eq(sloTargets.groupId, groupId)).limit(1);
    return r ?? null;
  }

  /** Every target of a group that still exists (the evaluator's round). */
  async targets(): Promise<SloTargetRow[]> {
    return this.db
      .select({
        groupId: sloTargets.groupId,
        userId: sloTargets.userId,
        target: sloTargets.target,
        updatedAt: sloTargets.updatedAt,
      })
      .from(sloTargets)
      .innerJoin(copierGroups, eq(copierGroups.id, sloTargets.groupId))
      .orderBy(asc(sloTargets.groupId));
  }

  async setTarget(userId: string, groupId: string, target: unknown): Promise<SloTargetRow> {
    const now = new Date();
    const [r] = await this.db
      .insert(sloTargets)
      .values({ groupId, userId, target, updatedAt: now })
      .onConflictDoUpdate({ target: sloTargets.groupId, set: { target, updatedAt: now } })
      .returning();
    return r!;
  }

  async breaches(filter: { groupId?: string; accountId?: string } = {}): Promise<SloBreachRow[]> {
    return this.db
      .select()
      .from(sloBreaches)
      .where(
        and(
          filter.groupId ? eq(sloBreaches.groupId, filter.groupId) : undefined,
          filter.accountId ? eq(sloBreaches.accountId, filter.accountId) : undefined,
        ),
      )
      .orderBy(asc(sloBreaches.since));
  }

  /**
   * Records a breach and its event in one transaction; false (nothing written) when that Slave's breach of that
   * metric is already open: a breach that lasts raises one event.
   */
  async openBreach(b: SloBreachRow, event: NewEvent): Promise<boolean> {
    const opened = await this.db.transaction(async (tx) => {
      const rows = await tx
        .insert(sloBreaches)
        .values(b)
        .onConflictDoNothing({ target: [sloBreaches.accountId, sloBreaches.metric] })
        .returning({ accountId: sloBreaches.accountId });
      if (rows.length === 0) return false;
      await this.events.append(tx, [event]);
      return true;
    });
    if (opened) this.events.notify([event.userId]);
    return opened;
  }

  /** Ends a breach with its event; false when another process ended it first. */
  async closeBreach(accountId: string, metric: string, event: NewEvent): Promise<boolean> {
    const closed = await this.db.transaction(async (tx) => {
      const rows = await tx
        .delete(sloBreaches)
        .where(and(eq(sloBreaches.accountId, accountId), eq(sloBreaches.metric, metric)))
        .returning({ accountId: sloBreaches.accountId });
      if (rows.length === 0) return false;
      await this.events.append(tx, [event]);
      return true;
    });
    if (closed) this.events.notify([event.userId]);
    return closed;
  }

  /** The ledger rows of these Slaves recorded in [from, to), with their trade's Master time and the sizing's spec. */
  async ledgerRows(slaveIds: readonly string[], from: Date, to: Date): Promise<SloRow[]> {
    if (slaveIds.length === 0) return [];
    const rows = await this.db
      .select({
        slaveAccountId: copyIntents.slaveAccountId,
        action: copyIntents.action,
        symbol: copyIntents.symbol,
        state: copyIntents.state,
        skipReason: copyIntents.skipReason,
        plannedVolume: copyIntents.plannedVolume,
        filledVolume: copyIntents.filledVolume,
        fillPrice: copyIntents.fillPrice,
        slippage: copyIntents.slippage,
        contractSize: sql<string | null>`${copyIntents.sizingInputs}->'spec'->>'contractSize'`,
        tickSize: sql<string | null>`${copyIntents.sizingInputs}->'spec'->>'tickSize'`,
        masterAt: trades.actionAt,
        answeredAt: copyIntents.updatedAt,
        createdAt: copyIntents.createdAt,
        currency: accounts.currency,
      })
      .from(copyIntents)
      .innerJoin(trades, eq(trades.id, copyIntents.tradeId))
      .leftJoin(accounts, eq(accounts.id, copyIntents.slaveAccountId))
      .where(
        and(
          inArray(copyIntents.slaveAccountId, [...slaveIds]),
          gte(copyIntents.createdAt, from),
          lt(copyIntents.createdAt, to),
        ),
      )
      .orderBy(asc(copyIntents.createdAt));
    // A follow-up (a close) has no sizing of its own: it takes the spec its Slave's sizing recorded for the symbol.
    const specs = new Map<string, { contractSize: string; tickSize: string }>();
    for (const r of rows)
      if (r.contractSize && r.tickSize)
        specs.set(`${r.slaveAccountId}|${r.symbol}`, { contractSize: r.contractSize, tickSize: r.tickSize });
    return rows.map((r) => {
      const spec = specs.get(`${r.slaveAccountId}|${r.symbol}`);
      return {
        ...r,
        plannedVolume: decOrNull(r.plannedVolume),
        filledVolume: decOrNull(r.filledVolume),
        fillPrice: decOrNull(r.fillPrice),
        slippage: decOrNull(r.slippage),
        contractSize: decOrNull(r.contractSize ?? spec?.contractSize),
        tickSize: decOrNull(r.tickSize ?? spec?.tickSize),
        currency: r.currency ?? null,
      };
    });
  }
}
