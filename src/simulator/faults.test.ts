import { describe, expect, it } from 'vitest';
import { SimFaultInjector } from './faults.js';

describe('SimFaultInjector', () => {
  it('matches by op and account and is spent after `times` hits', () => {
    const f = new SimFaultInjector();
    f.inject({ op: 'placeOrder', kind: 'reject', accountId: 'a', times: 2 });
    expect(f.take('placeOrder', 'b')).toBeNull();
    expect(f.take('read', 'a')).toBeNull();
    expect(f.take('placeOrder', 'a')?.remaining).toBe(1);
    expect(f.take('placeOrder', 'a')?.remaining).toBe(0);
    expect(f.take('placeOrder', 'a')).toBeNull();
    expect(f.list()).toEqual([]);
  });

  it('lets a wildcard op or a missing account match anything, first injected first', () => {
    const f = new SimFaultInjector();
    f.inject({ op: '*', kind: 'delay', delayMs: 5 });
    f.inject({ op: 'read', kind: 'rate_limit' });
    expect(f.take('read', 'x')?.kind).toBe('delay');
    expect(f.take('read', 'y')?.kind).toBe('rate_limit');
    expect(f.take('read', 'y')).toBeNull();
  });

  it('removes one fault by id and clears all', () => {
    const f = new SimFaultInjector();
    const a = f.inject({ op: 'cancelOrder', kind: 'reset', times: 5 });
    f.inject({ op: 'closePosition', kind: 'reset' });
    f.remove(a);
    expect(f.list().map((x) => x.op)).toEqual(['closePosition']);
    f.clear();
    expect(f.take('closePosition', 'a')).toBeNull();
  });

  it('refuses nonsensical specs', () => {
    const f = new SimFaultInjector();
    expect(() => f.inject({ op: 'read', kind: 'reject', times: 0 })).toThrow(RangeError);
    expect(() => f.inject({ op: 'placeOrder', kind: 'partial_fill', partialRatio: 1.5 })).toThrow(RangeError);
  });
});

describe('cancel_after_timeout', () => {
  it('is a placeOrder fault only (a close or a read cannot be taken and then cancelled)', () => {
    const f = new SimFaultInjector();
    expect(() => f.inject({ op: 'closePosition', kind: 'cancel_after_timeout' })).toThrow(/placeOrder only/);
    expect(() => f.inject({ op: '*', kind: 'cancel_after_timeout' })).toThrow(RangeError);
    f.inject({ op: 'placeOrder', kind: 'cancel_after_timeout', refuseAs: 'rejected' });
    expect(f.take('placeOrder', 'a')).toMatchObject({ kind: 'cancel_after_timeout', refuseAs: 'rejected' });
  });
});
