/**
 * The life of one copy intent. Every intent ends in exactly one terminal state; `unresolved` is settled only
 * by looking the tag up at the broker (found -> confirmed, proven absent -> resend or rejected), never by a
 * blind retry. The store enforces these moves on every write of an intent's state (TradesRepo).
 */
export const INTENT_STATES = ['planned', 'sent', 'confirmed', 'rejected', 'denied', 'unresolved', 'skipped'] as const;
export type IntentState = (typeof INTENT_STATES)[number];

const STATES: ReadonlySet<string> = new Set(INTENT_STATES);

/** Reads a stored row's state; a state we never write is a corrupt row, not something to guess about. */
export function intentState(s: string): IntentState {
  if (!STATES.has(s)) throw new Error(`unknown intent state ${s}`);
  return s as IntentState;
}

/** The states an intent is recorded in: to be sent, or decided without a send (skipped, denied by the risk guard). */
export const INITIAL_STATES: readonly IntentState[] = ['planned', 'skipped', 'denied'];

const NEXT: Record<IntentState, readonly IntentState[]> = {
  // The first send writes its outcome straight from planned; `sent` marks a resend by the settle loop (and a
  // planned row the process died on is settled by lookup like an unresolved one).
  planned: ['sent', 'confirmed', 'rejected', 'denied', 'unresolved'],
  sent: ['confirmed', 'rejected', 'denied', 'unresolved'],
  unresolved: ['confirmed', 'rejected', 'sent'],
  confirmed: [],
  rejected: [],
  denied: [],
  skipped: [],
};

export function canTransition(from: IntentState, to: IntentState): boolean {
  return NEXT[from].includes(to);
}

export function isTerminal(s: IntentState): boolean {
  return NEXT[s].length === 0;
}

/** Every state an intent may move to `to` from. */
export function allowedFrom(to: IntentState): IntentState[] {
  return INTENT_STATES.filter((s) => canTransition(s, to));
}

/** A write that would move an intent where the machine does not allow (a second outcome for a settled write, ...). */
export class IntentTransitionError extends Error {
  constructor(
    readonly intentId: string,
    readonly to: IntentState,
    readonly from: IntentState | null,
  ) {
    super(`intent ${intentId} cannot go ${from === null ? 'into' : `from ${from} to`} ${to}`);
    this.name = 'IntentTransitionError';
  }
}
