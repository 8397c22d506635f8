import { describe, expect, it } from 'vitest';
import { WorkClaims } from './work-claims.js';

const at = (ms: number) => new Date(ms);

describe('WorkClaims: the settle loop takes only what nobody here holds and what has been still for its grace', () => {
  it('an intent held by a send is not the settle loop’s, whatever its age; released, it is once still long enough', () => {
    const c = new WorkClaims();
    c.holdIntents(['int_a']);
    expect(c.settleMayTakeIntent({ id: 'int_a', updatedAt: at(0) }, 10_000, 1_000)).toBe(false);
    expect(c.tryHoldIntent('int_a')).toBe(false);
    c.releaseIntent('int_a');
    expect(c.settleMayTakeIntent({ id: 'int_a', updatedAt: at(9_500) }, 10_000, 1_000)).toBe(false);
    expect(c.settleMayTakeIntent({ id: 'int_a', updatedAt: at(9_000) }, 10_000, 1_000)).toBe(true);
    expect(c.tryHoldIntent('int_a')).toBe(true);
    expect(c.holdsIntent('int_a')).toBe(true);
  });

  it('an order-route trade is left alone while its route runs here, and a recorded trade while its accept is pending', () => {
    const c = new WorkClaims();
    const t = { id: 'trd_1', updatedAt: at(0) };
    c.orderRouteStarted(t.id);
    c.acceptPending(t.id);
    expect(c.orderRouteRunning(t.id)).toBe(true);
    expect(c.settleMayTakeOrderRoute(t, 60_000, 0)).toBe(false);
    expect(c.settleMayAccept(t, 60_000, 0)).toBe(false);
    c.orderRouteEnded(t.id);
    c.acceptWritten(t.id);
    expect(c.settleMayTakeOrderRoute(t, 60_000, 0)).toBe(true);
    expect(c.settleMayAccept(t, 60_000, 0)).toBe(true);
  });
});
