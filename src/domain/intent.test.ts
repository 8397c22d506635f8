import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canTransition, INTENT_STATES, isTerminal, type IntentState } from './intent.js';

describe('intent state machine', () => {
  it('every walk from planned ends in exactly one terminal state and never leaves it', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...INTENT_STATES), { maxLength: 20 }), (steps) => {
        let s: IntentState = 'planned';
        let terminalSeen = 0;
        for (const next of steps) {
          if (!canTransition(s, next)) continue;
          expect(isTerminal(s)).toBe(false);
          s = next;
          if (isTerminal(s)) terminalSeen++;
        }
        return terminalSeen <= 1;
      }),
    );
  });

  it('an unresolved write is never re-sent blind: only via lookup (confirmed/rejected) or an explicit resend', () => {
    expect(canTransition('sent', 'sent')).toBe(false);
    expect(canTransition('unresolved', 'confirmed')).toBe(true);
    expect(canTransition('unresolved', 'skipped')).toBe(false);
    expect(canTransition('confirmed', 'sent')).toBe(false);
  });
});
