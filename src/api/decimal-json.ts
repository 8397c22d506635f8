import { Type } from 'typebox';
import { Decimal } from '../domain/decimal.js';

/**
 * Family V's one convention for amounts, prices, volumes and percentages (docs/open-points.md, "Numbers in
 * family V"): answers carry JSON numbers, as the spec's order request does (V5); a request may send either a
 * JSON number or a decimal string ("0.5"), and the service keeps the value as an exact decimal from there on.
 */
/**
 * The largest magnitude any of these inputs takes unless a field sets a smaller one (`max`): below 10^12, in
 * both forms. Far above any real amount, price, volume or multiplier, and far below where a double loses
 * whole units, so what the store keeps reads back as the same finite number (issue 46: `1e309` was Infinity).
 */
export const DECIMAL_LIMIT = 1e12;
/** At most 12 digits before the point (below 10^12) and 12 after it. */
const DEC_PATTERN = '^[0-9]{1,12}(\\.[0-9]{1,12})?$';
/** The same, with a non-zero digit somewhere: more than zero. */
const POSITIVE_PATTERN = '^(?=[0-9.]*[1-9])[0-9]{1,12}(\\.[0-9]{1,12})?$';
/** 0 to 100. */
const PERCENT_PATTERN = '^(100(\\.0{1,12})?|[0-9]{1,2}(\\.[0-9]{1,12})?)$';

/**
 * A decimal a request may send as a number or a string; `percent` is 0 to 100, `positive` more than 0, and the
 * value is always finite and below `max` (default and ceiling DECIMAL_LIMIT; a number `max` is inclusive).
 */
export function DecimalIn(o: { percent?: boolean; positive?: boolean; max?: number; description?: string } = {}) {
  const max = o.percent
    ? { maximum: 100 }
    : o.max === undefined
      ? { exclusiveMaximum: DECIMAL_LIMIT }
      : { maximum: Math.min(o.max, DECIMAL_LIMIT) };
  const what = o.positive ? 'a positive' : 'a non-negative';
  const maxText = 'maximum' in max ? `, at most ${max.maximum}` : `, below ${DECIMAL_LIMIT.toExponential()}`;
  const pattern = o.percent ? PERCENT_PATTERN : o.positive ? POSITIVE_PATTERN : DEC_PATTERN;
  return Type.Union(
    [
      Type.Number({ ...(o.positive ? { exclusiveMinimum: 0 } : { minimum: 0 }), ...max }),
      Type.String({ pattern, maxLength: 25 }),
    ],
    {
      description: `${o.description ? `${o.description}: ` : ''}${what} number or decimal string (at most 12 digits after the point), e.g. 0.5 or "0.5"${maxText}`,
      'x-open-point': true,
    },
  );
}

/** A request's number or decimal string as the exact decimal string the domain keeps ("0.1", never "1e-1"). */
export const decimalIn = (v: number | string): string => new Decimal(v).toFixed();
export const decimalInOrNull = (v: number | string | null | undefined): string | null | undefined =>
  v === null || v === undefined ? v : decimalIn(v);

/** A stored decimal string as the JSON number an answer carries. */
export function numberOut(v: string | null | undefined): number | null {
  if (v === null || v === undefined || v === '') return null;
  // A value stored before the inputs were bounded ("Infinity", "NaN") or damaged by hand reads as no value: an
  // answer must not fail on it (JSON has no Infinity), and null is what every such field means by "none".
  try {
    const n = new Decimal(v).toNumber();
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}
