import { Decimal } from './decimal.js';

/** Base and quote currency of an FX-style symbol (EURUSD, EURUSD.m, XAUUSD), or null (US30, GER40). */
export function currenciesOf(symbol: string): { base: string; quote: string } | null {
  const s = symbol.toUpperCase().replace(/[^A-Z]/g, '');
  return s.length >= 6 ? { base: s.slice(0, 3), quote: s.slice(3, 6) } : null;
}

/**
 * Value of one unit of the symbol's quote currency in the account's: 1 when the account is in the quote
 * currency (EURUSD on USD), 1/price when it is in the base (USDJPY on USD), else the rate of a conversion
 * pair when the caller has one (`cross`: the mid of QUOTE+ACCOUNT, or of ACCOUNT+QUOTE inverted). Without
 * one, a cross (EURGBP on USD) and a symbol whose currencies cannot be read off its name (US30) count at 1:
 * an approximation, see docs/open-points.md.
 */
export function quoteToAccount(
  symbol: string,
  currency: string | null,
  price: Decimal | null,
  cross: Decimal | null = null,
): Decimal {
  const c = currenciesOf(symbol);
  const ccy = (currency ?? '').toUpperCase();
  if (!c || !ccy || c.quote === ccy) return new Decimal(1);
  if (c.base === ccy) return price && price.gt(0) ? new Decimal(1).div(price) : new Decimal(1);
  return cross && cross.gt(0) ? cross : new Decimal(1);
}

/** The pairs whose mid converts the symbol's quote currency into the account's, when it is a cross. */
export function conversionPairs(symbol: string, currency: string | null): { direct: string; inverse: string } | null {
  const c = currenciesOf(symbol);
  const ccy = (currency ?? '').toUpperCase();
  if (!c || !ccy || c.quote === ccy || c.base === ccy) return null;
  return { direct: `${c.quote}${ccy}`, inverse: `${ccy}${c.quote}` };
}
