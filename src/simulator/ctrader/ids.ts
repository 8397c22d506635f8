import { createHash } from 'node:crypto';
import type { SimAccount, SimBrokerApi } from '../contract.js';

/**
 * Sim accounts have string ids; the Open API addresses them by int64 ctidTraderAccountId and shows an int64
 * traderLogin. Numeric ids pass through, others get a stable hash so ids survive a simulator restart.
 */
const MAX_INT64 = (1n << 63n) - 1n;

const hashed = (s: string): string =>
  (BigInt(`0x${createHash('sha256').update(s).digest('hex').slice(0, 12)}`) + 1_000_000_000n).toString();

function int64Of(s: string): string {
  if (/^\d{1,19}$/.test(s) && BigInt(s) <= MAX_INT64 && BigInt(s) > 0n) return BigInt(s).toString();
  return hashed(s);
}

export const ctidOf = (acc: SimAccount): string => int64Of(acc.meta['ctidTraderAccountId'] ?? acc.id);
export const traderLoginOf = (acc: SimAccount): string => int64Of(acc.login);
export const environmentOf = (acc: SimAccount): 'demo' | 'live' =>
  acc.meta['environment'] === 'live' ? 'live' : 'demo';

export function accountByCtid(broker: SimBrokerApi, ctid: string): SimAccount | null {
  return broker.accounts().find((a) => ctidOf(a) === ctid) ?? null;
}

/** Asset ids: a fixed table for the usual names, a stable hash for the rest. */
const KNOWN_ASSETS: Record<string, number> = { USD: 1, EUR: 2, GBP: 3, JPY: 4, XAU: 5, CHF: 6, AUD: 7, CAD: 8, NZD: 9 };
export const assetIdOf = (name: string): string =>
  KNOWN_ASSETS[name] !== undefined ? String(KNOWN_ASSETS[name]) : hashed(`asset:${name}`);

/** Base and quote asset names of a symbol (6-letter pairs split 3/3; anything else is its own base, quoted in USD). */
export function assetsOfSymbol(symbol: string): { base: string; quote: string } {
  if (/^[A-Z]{6}$/.test(symbol)) return { base: symbol.slice(0, 3), quote: symbol.slice(3) };
  return { base: symbol, quote: 'USD' };
}
