import { createHash } from 'node:crypto';
import { Decimal } from '../decimal.js';

/**
 * Canonical JSON, the bytes every receipt hash is taken over: object keys sorted by code unit, no whitespace,
 * decimals as strings (a Decimal is written as its `toString()`, the ledger's text rule), dates as ISO-8601 UTC
 * strings, `undefined` members left out. Plain numbers (sequence numbers, attempts, latencies in ms) are written as
 * ECMAScript's JSON.stringify writes them (the shortest text that reads back as the same double, fixed by the
 * language); a non-finite one is refused. Money is never a plain number here: volumes and prices are Decimals.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Decimal.isDecimal(value)) return JSON.stringify((value as Decimal).toString());
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`canonical JSON takes finite numbers only, got ${value}`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const o = value as Record<string, unknown>;
      const keys = Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
    }
    default:
      throw new Error(`canonical JSON cannot hold a ${typeof value}`);
  }
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
