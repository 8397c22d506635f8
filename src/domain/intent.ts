/**
 * The life of one copy intent. Every intent ends in exactly one terminal state; `unresolved` is settled only
 * by looking the tag up at the broker (found -> confirmed, proven absent -> resend or rejected), never by a
 * blind retry.
 */
export const INTENT_STATES = ['planned', 'sent', 'confirmed', 'rejected', 'denied', 'unresolved', 'skipped'] as const;
export type IntentState = (typeof INTENT_STATES)[number];

const NEXT: Record<IntentState, readonly IntentState[]> = {
  planned: ['sent', 'denied', 'skipped'],
  sent: ['confirmed', 'rejected', 'unresolved'],
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
