import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { copyRules, riskLimits, ruleRevisions } from '../schema.js';
import { ruleOnly, withDefaults, type CopyRule } from '../../domain/copy-rule.js';
import {
  diffSnapshots,
  type RevisionSnapshot,
  type RevisionSource,
  type RuleRevision,
} from '../../domain/revisions/revision.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface RevisionWho {
  userId: string;
  /** `key:<id>` or `session:<id>`. */
  actor: string;
}

/** A change to record: the target, and the parts of its state that change (absent = as they are). */
interface Change {
  targetId: string;
  scope: 'account' | 'group';
  source: RevisionSource;
  rule?: CopyRule;
  /** The new limits row (limits and the monitor's state); its `limits` go into the snapshot. */
  limits?: { limits: unknown; state: unknown };
  rolledBackTo?: number;
}

const toRevision = (r: typeof ruleRevisions.$inferSelect): RuleRevision => {
  const snap = r.snapshot as RevisionSnapshot & { rolledBackTo?: number };
  const { rolledBackTo, ...stored } = snap;
  // A migrated rule is the JSON as it was stored; read it as the planner does (defaults for what it lacks).
  const snapshot: RevisionSnapshot =
    stored.rule === undefined
      ? stored
      : { ...stored, rule: stored.rule && ruleOnly(withDefaults(stored.rule as Partial<CopyRule>)) };
  return {
    targetId: r.targetId,
    seq: r.seq,
    scope: r.scope as 'account' | 'group',
    userId: r.userId,
    actor: r.actor,
    source: r.source as RevisionSource,
    snapshot,
    diff: r.diff as RuleRevision['diff'],
    ...(rolledBackTo !== undefined ? { rolledBackTo } : {}),
    createdAt: r.createdAt,
  };
};

/**
 * Rule revisions (migration 0025): each write of a Slave's copy rule or of an account's or group's risk limits goes
 * through here, and in the same transaction becomes the target's next numbered revision with its diff. The copy
 * rule's JSON carries the Slave's current revision, so rows planned under it name it.
 */
export class RuleRevisionsRepo {
  constructor(
    private readonly db: Db,
    /** Drops a Slave's rule from the accounts repo's memory (single-writer store) after it was written here. */
    private readonly forgetRule: (slaveAccountId: string) => void = () => {},
  ) {}

  async list(targetId: string, limit = 100): Promise<RuleRevision[]> {
    const rows = await this.db
      .select()
      .from(ruleRevisions)
      .where(eq(ruleRevisions.targetId, targetId))
      .orderBy(desc(ruleRevisions.seq))
      .limit(limit);
    return rows.map(toRevision);
  }

  async get(targetId: string, seq: number): Promise<RuleRevision | null> {
    const [r] = await this.db
      .select()
      .from(ruleRevisions)
      .where(and(eq(ruleRevisions.targetId, targetId), eq(ruleRevisions.seq, seq)));
    return r ? toRevision(r) : null;
  }

  /** Sets a Slave's copy rule; returns its revision (the latest, when the rule is the one in place). */
  async setRule(who: RevisionWho, accountId: string, rule: CopyRule): Promise<RuleRevision> {
    return this.record(who, { targetId: accountId, scope: 'account', source: 'copy_rule', rule: ruleOnly(rule) });
  }

  /** Sets an account's or a group's risk limits row (limits and the monitor's state kept with them). */
  async setLimits(
    who: RevisionWho,
    scope: 'account' | 'group',
    targetId: string,
    row: { limits: unknown; state: unknown },
  ): Promise<RuleRevision> {
    return this.record(who, { targetId, scope, source: 'risk_limits', limits: row });
  }

  /**
   * Puts back what revision `seq` held, as a new revision (a rollback is a change like any other). Null when the
   * target has no such revision.
   */
  async rollback(
    who: RevisionWho,
    targetId: string,
    seq: number,
    /** The monitor's state for a limits row the rollback has to create (engine/risk/evaluate.ts EMPTY_STATE). */
    emptyState: unknown,
  ): Promise<RuleRevision | null> {
    const old = await this.get(targetId, seq);
    if (!old) return null;
    const { rule, riskLimits: limits } = old.snapshot;
    return this.record(who, {
      targetId,
      scope: old.scope,
      source: 'rollback',
      ...(old.scope === 'account' ? { rule: rule ? ruleOnly(rule) : withDefaults(undefined) } : {}),
      limits: { limits, state: emptyState },
      rolledBackTo: seq,
    });
  }

  private async record(who: RevisionWho, c: Change): Promise<RuleRevision> {
    const out = await this.db.transaction(async (tx) => {
      // One writer per target at a time: the next number and the state it follows are read under this lock.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`rule_revisions:${c.targetId}`}))`);
      const [last] = await tx
        .select()
        .from(ruleRevisions)
        .where(eq(ruleRevisions.targetId, c.targetId))
        .orderBy(desc(ruleRevisions.seq))
        .limit(1);
      const before = last ? toRevision(last).snapshot : await currentState(tx, c.targetId, c.scope);
      const after: RevisionSnapshot = {
        ...before,
        ...(c.rule ? { rule: c.rule } : {}),
        ...(c.limits ? { riskLimits: (c.limits.limits as Record<string, unknown> | null) ?? null } : {}),
      };
      const diff = diffSnapshots(before, after);
      if (last && diff.length === 0 && c.source !== 'rollback') {
        // The same limits again may still reset the monitor's state (resetPeak): written, but not a revision.
        if (c.limits) await writeLimits(tx, who.userId, c, after.riskLimits);
        return toRevision(last);
      }
      let seq = (last?.seq ?? 0) + 1;
      // The first change recorded of a target: what was in place before it becomes revision 1, to roll back to.
      if (!last && diff.length > 0) {
        await tx.insert(ruleRevisions).values({
          targetId: c.targetId,
          seq: seq++,
          scope: c.scope,
          userId: who.userId,
          actor: 'system',
          source: 'initial',
          snapshot: before,
          diff: [],
        });
      }
      const [row] = await tx
        .insert(ruleRevisions)
        .values({
          targetId: c.targetId,
          seq,
          scope: c.scope,
          userId: who.userId,
          actor: who.actor,
          source: c.source,
          snapshot: { ...after, ...(c.rolledBackTo !== undefined ? { rolledBackTo: c.rolledBackTo } : {}) },
          diff,
        })
        .returning();
      if (c.limits) await writeLimits(tx, who.userId, c, after.riskLimits);
      // The rule carries the account's revision (a change of its own limits moves it too): rows name it.
      if (c.scope === 'account') {
        const rule = { ...(after.rule ?? withDefaults(undefined)), revision: seq };
        await tx
          .insert(copyRules)
          .values({ slaveAccountId: c.targetId, rule })
          .onConflictDoUpdate({ target: copyRules.slaveAccountId, set: { rule, updatedAt: new Date() } });
      }
      return toRevision(row!);
    });
    if (c.scope === 'account') this.forgetRule(c.targetId);
    return out;
  }
}

/** A target's state where it has no revision yet (created after migration 0025, never changed since). */
async function currentState(tx: Tx, targetId: string, scope: 'account' | 'group'): Promise<RevisionSnapshot> {
  const [limits] = await tx.select().from(riskLimits).where(eq(riskLimits.targetId, targetId));
  const riskLimitsNow = (limits?.limits as Record<string, unknown> | undefined) ?? null;
  if (scope === 'group') return { riskLimits: riskLimitsNow };
  const [rule] = await tx.select().from(copyRules).where(eq(copyRules.slaveAccountId, targetId));
  return { rule: ruleOnly(withDefaults(rule?.rule as Partial<CopyRule> | undefined)), riskLimits: riskLimitsNow };
}

/** Writes the limits row: a change keeps the monitor's state; a rollback to "no limits" removes the row. */
async function writeLimits(tx: Tx, userId: string, c: Change, limits: unknown): Promise<void> {
  const now = new Date();
  if (limits === null) {
    await tx.delete(riskLimits).where(eq(riskLimits.targetId, c.targetId));
    return;
  }
  const state = c.limits?.state;
  await tx
    .insert(riskLimits)
    .values({ targetId: c.targetId, userId, scope: c.scope, limits, state, updatedAt: now })
    .onConflictDoUpdate({
      target: riskLimits.targetId,
      // A rollback brings back the limits, not the monitor's state of then (peak, day start): that stays current.
      set: c.source === 'rollback' ? { limits, updatedAt: now } : { limits, state, updatedAt: now },
    });
}
