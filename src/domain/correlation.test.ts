import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { correlationTag, mayBeOurTag } from './correlation.js';

/** The tag as first written (createHash, whole-digest base32, cut to 16): the settle loop relies on it never changing. */
function reference(parts: { tradeId: string; accountId: string; action: string; attempt?: number }): string {
  const h = createHash('sha256')
    .update(`${parts.tradeId}|${parts.accountId}|${parts.action}|${parts.attempt ?? 0}`)
    .digest();
  const A = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of h) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += A[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `ct${out.slice(0, 16)}`;
}

describe('correlationTag', () => {
  it('gives the tags recorded by earlier versions (values pinned before the one-shot hash)', () => {
    expect(correlationTag({ tradeId: 'trd_1', accountId: 'acc_1', action: 'open' })).toBe('ctmq3xdcuzjojrsowp');
    expect(
      correlationTag({
        tradeId: 'trd_0mhxyz12abcdefghijklmnop',
        accountId: 'acc_0mhxyz12qrstuvwxyz012345',
        action: 'close:p123',
        attempt: 2,
      }),
    ).toBe('ctih7p5vremmpaghh3');
    expect(correlationTag({ tradeId: 'trd_é', accountId: 'acc_ü', action: 'heal_open', attempt: 0 })).toBe(
      'ctyqemzywlk3osdaac',
    );
  });

  it('matches the reference for many inputs, and keeps its shape', () => {
    for (let i = 0; i < 2000; i++) {
      const parts = {
        tradeId: `trd_${i.toString(36)}`,
        accountId: `acc_${(i * 7919).toString(36)}`,
        action: 'open',
        attempt: i % 3,
      };
      const tag = correlationTag(parts);
      expect(tag).toBe(reference(parts));
      expect(tag).toMatch(/^ct[a-z2-7]{16}$/);
    }
  });

  it("tells a tag of ours from another tool's by its shape alone", () => {
    for (let i = 0; i < 200; i++)
      expect(
        mayBeOurTag(correlationTag({ tradeId: `trd_${i}`, accountId: 'acc_1', action: 'open', attempt: i % 3 })),
      ).toBe(true);
    for (const foreign of [
      '',
      'other-tool-1',
      'manualpend1',
      'ct',
      'CTMQ3XDCUZJOJRSOWP',
      'ctmq3xdcuzjojrsow1',
      'ctmq3xdcuzjojrsowpx',
      ' ctmq3xdcuzjojrsowp',
    ])
      expect(mayBeOurTag(foreign)).toBe(false);
  });
});
