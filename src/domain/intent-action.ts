/** What a Master did, as the engine copies it (the watcher's diff, the order route, the reconciler's synthetic actions). */
export const ACTION_KINDS = [
  'open',
  'increase',
  'reduce',
  'close',
  'modify',
  'order_placed',
  'order_modified',
  'order_cancelled',
  'order_filled',
] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/**
 * What one ledger row (copy intent) does at the Slave's broker: a Master action's kind, a reconciler heal, or
 * `open_on_fill` (a Slave that does not copy pending orders opens at market when the Master's order fills).
 */
export const INTENT_ACTIONS = [
  ...ACTION_KINDS,
  'heal_open',
  'heal_increase',
  'heal_close',
  'heal_reduce',
  'open_on_fill',
] as const;
export type IntentAction = (typeof INTENT_ACTIONS)[number];

export type HealAction = 'heal_open' | 'heal_increase' | 'heal_close' | 'heal_reduce';

const ACTIONS: ReadonlySet<string> = new Set(INTENT_ACTIONS);
const ADDS_RISK: ReadonlySet<ActionKind> = new Set<ActionKind>(['open', 'increase', 'order_placed']);
const STALE: ReadonlySet<IntentAction> = new Set<IntentAction>([
  'open',
  'increase',
  'order_placed',
  'heal_open',
  'heal_increase',
  'order_modified',
  'open_on_fill',
]);
const OPENS_COPY: ReadonlySet<IntentAction> = new Set<IntentAction>([
  'open',
  'heal_open',
  'order_filled',
  'order_placed',
  'open_on_fill',
]);

export const isIntentAction = (s: string): s is IntentAction => ACTIONS.has(s);

/** Reads a stored row's action; a name we never write is a corrupt row, not something to guess about. */
export function intentAction(s: string): IntentAction {
  if (!isIntentAction(s)) throw new Error(`unknown intent action ${s}`);
  return s;
}

/** Master actions that add exposure: subject to staleness, sizing and the pre-trade check. Closing never is. */
export const addsRisk = (k: ActionKind): boolean => ADDS_RISK.has(k);

/** Rows that add exposure go stale; closes, reductions, SL/TP and cancels never do (they only take risk away). */
export const goesStale = (a: IntentAction): boolean => STALE.has(a);

export const isHeal = (a: IntentAction): a is HealAction => a.startsWith('heal_');

/** Rows that can have opened the Slave's copy of a Master position (the reconciler's evidence of a copy). */
export const opensCopy = (a: IntentAction): boolean => OPENS_COPY.has(a);

/** Actions on the Master's pending orders (their links are of kind `order`). */
export const isOrderAction = (k: ActionKind): boolean => k.startsWith('order_');
