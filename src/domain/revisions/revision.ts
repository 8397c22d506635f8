import type { CopyRule } from '../copy-rule.js';

/** What a target's revision holds: the whole state after the change. A group's has no `rule`. */
export interface RevisionSnapshot {
  rule?: CopyRule | null;
  /** The target's own risk limits as stored (engine/risk/limits.ts RiskLimits), null = none set. */
  riskLimits: Record<string, unknown> | null;
}

/** One changed field: its dotted path in the snapshot (`rule.sizing.multiplier`), before and after. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** What wrote a revision; `initial` and `migration`: the state found before the first recorded change. */
export type RevisionSource = 'copy_rule' | 'risk_limits' | 'rollback' | 'migration' | 'initial';

export interface RuleRevision {
  targetId: string;
  seq: number;
  scope: 'account' | 'group';
  userId: string;
  actor: string;
  source: RevisionSource;
  snapshot: RevisionSnapshot;
  diff: FieldChange[];
  /** The revision a rollback returned to. */
  rolledBackTo?: number;
  createdAt: Date;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Field by field, what differs between two snapshots: objects are walked (sizing, symbolMap, limits), anything else
 * (strings, numbers, arrays, null) compared whole as JSON. A sizing whose mode changed shows each of its fields.
 */
export function diffSnapshots(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffSnapshots(before[k] ?? null, after[k] ?? null, path ? `${path}.${k}` : k));
  }
  if (isPlainObject(before) || isPlainObject(after)) {
    // One side absent (null): each field of the other is a change of its own.
    const obj = (isPlainObject(before) ? before : after) as Record<string, unknown>;
    return Object.keys(obj)
      .sort()
      .flatMap((k) =>
        diffSnapshots(
          isPlainObject(before) ? (before[k] ?? null) : null,
          isPlainObject(after) ? (after[k] ?? null) : null,
          path ? `${path}.${k}` : k,
        ),
      );
  }
  return JSON.stringify(before ?? null) === JSON.stringify(after ?? null)
    ? []
    : [{ field: path, before: before ?? null, after: after ?? null }];
}
