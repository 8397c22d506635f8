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

/** ctid -> sim account id, per broker: rebuilt when a ctid is not found or no longer matches (accounts added). */
const byCtid = new WeakMap<SimBrokerApi, Map<string, string>>();

/**
 * The account served under a ctidTraderAccountId. Indexed: a scan of every account (a copy of each, and its ctid
 * worked out) cost 41 ms at 10,000 accounts, once per account authorisation, so the single-threaded simulator,
 * not the 50 req/s per connection, set the pace of 10,000 first authorisations (about 24 a second).
 */
export function accountByCtid(broker: SimBrokerApi, ctid: string): SimAccount | null {
  const hit = byCtid.get(broker)?.get(ctid);
  const acc = hit !== undefined ? broker.account(hit) : null;
  if (acc && ctidOf(acc) === ctid) return acc;
  const index = new Map<string, string>();
  let found: SimAccount | null = null;
  for (const a of broker.accounts()) {
    const id = ctidOf(a);
    index.set(id, a.id);
    if (id === ctid) found = a;
  }
  byCtid.set(broker, index);
  return found;
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
