import { createHash } from 'node:crypto';

/**
 * Deterministic correlation tag of one broker write. The same (trade, account, action, attempt) always gives
 * the same tag, so after a crash or timeout we can ask the broker "did you get this?" instead of sending twice.
 * 18 characters of [a-z0-9]: fits TradeLocker strategyId (<= 31), cTrader clientOrderId (<= 50) and
 * MetaApi clientId inside the 26-character comment rule.
 */
export function correlationTag(parts: {
  tradeId: string;
  accountId: string;
  action: string;
  attempt?: number;
}): string {
  const h = createHash('sha256')
    .update(`${parts.tradeId}|${parts.accountId}|${parts.action}|${parts.attempt ?? 0}`)
    .digest();
  return `ct${base32(h).slice(0, 16)}`;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
function base32(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}
