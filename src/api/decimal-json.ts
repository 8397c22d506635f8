import { Type } from 'typebox';
import { Decimal } from '../domain/decimal.js';

/**
 * Family V's one convention for amounts, prices, volumes and percentages (docs/open-points.md, "Numbers in
 * family V"): answers carry JSON numbers, as the spec's order request does (V5); a request may send either a
 * JSON number or a decimal string ("0.5"), and the service keeps the value as an exact decimal from there on.
 */
const DEC_PATTERN = '^[0-9]+(\\.[0-9]+)?$';
/** The same, with a non-zero digit somewhere: more than zero. */
const POSITIVE_PATTERN = '^(?=[0-9.]*[1-9])[0-9]+(\\.[0-9]+)?$';
/** 0 to 100. */
const PERCENT_PATTERN = '^(100(\\.0+)?|[0-9]{1,2}(\\.[0-9]+)?)$';

/** A decimal a request may send as a number or a string; `percent` is 0 to 100, `positive` more than 0. */
export function DecimalIn(o: { percent?: boolean; positive?: boolean; max?: number; description?: string } = {}) {
  const max = o.percent ? { maximum: 100 } : o.max === undefined ? {} : { maximum: o.max };
  const what = o.positive ? 'a positive' : 'a non-negative';
  const maxText = 'maximum' in max ? `, at most ${max.maximum}` : '';
  const pattern = o.percent ? PERCENT_PATTERN : o.positive ? POSITIVE_PATTERN : DEC_PATTERN;
  return Type.Union(
    [
      Type.Number({ ...(o.positive ? { exclusiveMinimum: 0 } : { minimum: 0 }), ...max }),
      Type.String({ pattern, maxLength: 24 }),
    ],
    {
      description: `${o.description ? `${o.description}: ` : ''}${what} number or decimal string, e.g. 0.5 or "0.5"${maxText}`,
      'x-open-point': true,
    },
  );
}

/** A request's number or decimal string as the exact decimal string the domain keeps ("0.1", never "1e-1"). */
export const decimalIn = (v: number | string): string => new Decimal(v).toFixed();
export const decimalInOrNull = (v: number | string | null | undefined): string | null | undefined =>
  v === null || v === undefined ? v : decimalIn(v);

/** A stored decimal string as the JSON number an answer carries. */
export const numberOut = (v: string | null | undefined): number | null =>
  v === null || v === undefined || v === '' ? null : new Decimal(v).toNumber();
