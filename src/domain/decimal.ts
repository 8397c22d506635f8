import DecimalDefault from 'decimal.js';
import type * as DecimalTypes from 'decimal.js';

/**
 * decimal.js ships CommonJS-style typings with an ESM default export, so under NodeNext its default import
 * is mistyped. Everyone takes the class from here instead: `import { Decimal } from '../domain/decimal.js'`.
 */
export const Decimal = DecimalDefault as unknown as typeof DecimalTypes.Decimal;
export type Decimal = DecimalTypes.Decimal;
export type DecimalValue = DecimalTypes.Decimal.Value;

export const dec = (v: DecimalValue): Decimal => new Decimal(v);
export const decOrNull = (v: DecimalValue | null | undefined): Decimal | null =>
  v === null || v === undefined || v === '' ? null : new Decimal(v);

/**
 * A decimal as the ledger writes it, in a column or an event payload (`toString()`: what was always written).
 * See the text rule in store/ledger-mappers.ts.
 */
export function decText(d: Decimal): string;
export function decText(d: Decimal | null | undefined): string | null;
export function decText(d: Decimal | null | undefined): string | null {
  return d === null || d === undefined ? null : d.toString();
}

/** Round down to a multiple of `step` (never size a copy up past what the rule allows). */
export function floorToStep(value: Decimal, step: Decimal): Decimal {
  if (step.lte(0)) return value;
  return value.div(step).floor().mul(step);
}

/** Round to the nearest multiple of `step`, half away from zero. */
export function roundToStep(value: Decimal, step: Decimal): Decimal {
  if (step.lte(0)) return value;
  return value.div(step).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).mul(step);
}

export function isMultipleOf(value: Decimal, step: Decimal): boolean {
  if (step.lte(0)) return true;
  return value.mod(step).isZero();
}

/** JSON numbers at the API edge; the value is exact as a decimal up to that point. */
export const toNum = (v: Decimal | null): number | null => (v === null ? null : v.toNumber());
