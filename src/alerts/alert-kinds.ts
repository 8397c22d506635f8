import type { EventType } from '../events/catalogue.js';

/**
 * What can alert, as the user chooses it: each kind is a test on events of the catalogue, the same events the
 * webhooks deliver and the stream shows (no second source). A kind without a rule row is on.
 */
export interface AlertKind {
  kind: string;
  /** Singular and plural label of one occurrence, for a message's counts ("3 copies refused"). */
  one: string;
  many: string;
  description: string;
  types: EventType[];
  matches?: (data: Record<string, unknown>) => boolean;
  /**
   * Events with the same key are one occurrence: a group's panic-close writes one event per account of the group,
   * and the trader started one panic-close. `merge` folds a later event's data into the first's.
   */
  sameAs?: (data: Record<string, unknown>) => string;
  merge?: (into: Record<string, unknown>, data: Record<string, unknown>) => void;
}

const panicTarget = (d: Record<string, unknown>) => `${String(d.scope)}:${String(d.targetId)}`;
const sumTotals = (into: Record<string, unknown>, d: Record<string, unknown>) => {
  for (const k of ['closed', 'failed', 'remaining']) into[k] = Number(into[k] ?? 0) + Number(d[k] ?? 0);
};

/** Statuses that mean the service lost the account (not paused or locked by a user or a rule). */
const DISCONNECTED = new Set(['disconnected', 'reconnect_required']);

export const ALERT_KINDS: AlertKind[] = [
  {
    kind: 'account_disconnected',
    one: 'account disconnected',
    many: 'accounts disconnected',
    description: "An account's status became disconnected or reconnect_required (account.status_changed).",
    types: ['account.status_changed'],
    matches: (d) => DISCONNECTED.has(String(d.after)),
  },
  {
    kind: 'copy_rejected',
    one: 'copy refused',
    many: 'copies refused',
    description: "A Slave's broker refused a copy (copy.rejected).",
    types: ['copy.rejected'],
  },
  {
    kind: 'risk_triggered',
    one: 'risk limit tripped',
    many: 'risk limits tripped',
    description:
      'A risk rule fired, or a Master tripped the circuit breaker (risk.triggered, account.circuit_breaker_tripped).',
    types: ['risk.triggered', 'account.circuit_breaker_tripped'],
  },
  {
    kind: 'panic_close_started',
    one: 'panic-close started',
    many: 'panic-closes started',
    description: 'A panic-close of an account or a group started (panic_close.started).',
    types: ['panic_close.started'],
    sameAs: panicTarget,
  },
  {
    kind: 'panic_close_finished',
    one: 'panic-close ended',
    many: 'panic-closes ended',
    description: 'A panic-close ended, flat or with positions left (panic_close.finished).',
    types: ['panic_close.finished'],
    sameAs: panicTarget,
    merge: sumTotals,
  },
  {
    kind: 'slo_breached',
    one: 'service level breached',
    many: 'service levels breached',
    description: "A Slave's service levels broke its group's target (slo.breached; docs/slo.md).",
    types: ['slo.breached'],
  },
];

export const ALERT_KIND_NAMES = ALERT_KINDS.map((k) => k.kind);

/** The kind an event alerts as, among the enabled ones; null when it does not alert. */
export function alertKindOf(
  type: string,
  data: Record<string, unknown>,
  enabled: ReadonlySet<string>,
): AlertKind | null {
  for (const k of ALERT_KINDS)
    if (enabled.has(k.kind) && (k.types as string[]).includes(type) && (!k.matches || k.matches(data))) return k;
  return null;
}

/** The enabled kinds from a user's rule rows (a kind without a row is on). */
export function enabledKinds(rows: Array<{ kind: string; enabled: boolean }>): Set<string> {
  const off = new Set(rows.filter((r) => !r.enabled).map((r) => r.kind));
  return new Set(ALERT_KIND_NAMES.filter((k) => !off.has(k)));
}
