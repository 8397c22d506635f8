import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, displayPrefix, generateSecret, hashSecret, wellFormed } from './secrets.js';
import { correlationTag } from '../domain/correlation.js';

describe('bearer secrets', () => {
  it('carry a typed prefix and a checksum that catches typos', () => {
    const k = generateSecret(API_KEY_PREFIX);
    expect(wellFormed(k, API_KEY_PREFIX)).toBe(true);
    const typo = k.slice(0, 10) + (k[10] === 'a' ? 'b' : 'a') + k.slice(11);
    expect(wellFormed(typo, API_KEY_PREFIX)).toBe(false);
    expect(wellFormed(k, 'ctat_')).toBe(false);
    expect(displayPrefix(k, API_KEY_PREFIX)).toHaveLength(10);
    expect(hashSecret(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(generateSecret(API_KEY_PREFIX)).not.toBe(k);
  });
});

describe('correlation tags', () => {
  it('are deterministic, distinct per account/action/attempt, and fit every platform (<= 26 chars, [a-z0-9])', () => {
    const a = correlationTag({ tradeId: 'trd_1', accountId: 'acc_1', action: 'open' });
    expect(correlationTag({ tradeId: 'trd_1', accountId: 'acc_1', action: 'open' })).toBe(a);
    expect(correlationTag({ tradeId: 'trd_1', accountId: 'acc_2', action: 'open' })).not.toBe(a);
    expect(correlationTag({ tradeId: 'trd_1', accountId: 'acc_1', action: 'open', attempt: 1 })).not.toBe(a);
    expect(a).toMatch(/^[a-z0-9]{18}$/);
  });
});
