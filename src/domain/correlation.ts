import * as crypto from 'node:crypto';

/** One-shot SHA-256 (`crypto.hash`, Node >= 20.12 / 21.7) where present: no Hash object per tag. */
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'buffer') => Buffer }).hash;
const sha256 = oneShot
  ? (s: string): Buffer => oneShot('sha256', s, 'buffer')
  : (s: string): Buffer => crypto.createHash('sha256').update(s).digest();

/**
 * Deterministic correlation tag of one broker write. The same (trade, account, action, attempt) always gives
 * the same tag, so after a crash or timeout we can ask the broker "did you get this?" instead of sending twice.
 * 18 characters of [a-z0-9]: fits TradeLocker strategyId (<= 31), cTrader clientOrderId (<= 50) and
 * MetaApi clientId inside the 26-character comment rule. The settle loop recomputes tags of recorded writes, so
 * the function must never change its output (src/domain/correlation.test.ts pins it).
 */
export function correlationTag(parts: {
  tradeId: string;
  accountId: string;
  action: string;
  attempt?: number;
}): string {
  return `ct${base32Head(sha256(`${parts.tradeId}|${parts.accountId}|${parts.action}|${parts.attempt ?? 0}`))}`;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `ct` and 16 characters of ALPHABET: the one shape `correlationTag` has given since it was first written. */
const SHAPE = /^ct[a-z2-7]{16}$/;

/**
 * Whether `tag` could be one of ours. Every trade's and copy intent's tag, and every earlier attempt's, is written
 * from `correlationTag` (the order route, the watcher's record, the planners, the settle loop's new attempt; no
 * migration, import or other route writes one), so a tag of another shape names no trade or intent of ours and
 * the reads that look for one can be skipped. A new writer of tags must use `correlationTag` for this to hold.
 */
export function mayBeOurTag(tag: string): boolean {
  return SHAPE.test(tag);
}

/** The first 16 base32 characters (the first 80 bits, 10 bytes) of the digest: all the tag keeps. */
function base32Head(buf: Buffer): string {
  let out = '';
  // Two 5-byte groups of 40 bits, 8 characters each (40-bit values fit a double exactly).
  for (let g = 0; g < 10; g += 5) {
    let v = buf[g]! * 2 ** 32 + ((buf[g + 1]! << 24) >>> 0) + (buf[g + 2]! << 16) + (buf[g + 3]! << 8) + buf[g + 4]!;
    let chunk = '';
    for (let i = 0; i < 8; i++) {
      chunk = ALPHABET[v % 32]! + chunk;
      v = Math.floor(v / 32);
    }
    out += chunk;
  }
  return out;
}
