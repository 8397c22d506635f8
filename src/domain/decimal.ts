import Decimal from 'decimal.js';

export { Decimal };

export const dec = (v: Decimal.Value): Decimal => new Decimal(v);
export const decOrNull = (v: Decimal.Value | null | undefined): Decimal | null =>
  v === null || v === undefined || v === '' ? null : new Decimal(v);

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
