import { Decimal } from '../../domain/decimal.js';
import type { Side } from '../../domain/types.js';
import type { SimInstrument } from '../contract.js';

/**
 * stopLossType / takeProfitType as the place-order and modify-order bodies carry them (fact sheet §10):
 * `absolute` is a price; `offset` is a distance in pips from the reference (the fill for an order that executes
 * now, the order's own price for one that rests); `trailingOffset` (stop loss only, distance in `trStopOffset`
 * or `stopLoss`) is accepted but fixed at placement: the simulator does not trail (docs/open-points.md).
 */

export class LevelError extends Error {}

export const STOP_LOSS_TYPES = ['absolute', 'offset', 'trailingOffset'] as const;
export const TAKE_PROFIT_TYPES = ['absolute', 'offset'] as const;

/** FX pips are one digit above the last quoted digit; elsewhere the tick is the pip (as the cTrader front end). */
export function pipSize(inst: SimInstrument): Decimal {
  return inst.digits === 5 || inst.digits === 3 ? new Decimal(10).pow(-(inst.digits - 1)) : inst.tickSize;
}

export interface LevelInput {
  kind: 'stopLoss' | 'takeProfit';
  value: Decimal | null;
  type: unknown;
  /** trStopOffset, for a trailingOffset stop loss. */
  trailing?: Decimal | null;
}

/** The absolute level the simulator stores, or null for none; throws LevelError for a request the API refuses. */
export function resolveLevel(inst: SimInstrument, side: Side, ref: () => Decimal, input: LevelInput): Decimal | null {
  const { kind, type } = input;
  const value = type === 'trailingOffset' ? (input.trailing ?? input.value) : input.value;
  if (value === null) return null;
  const allowed: readonly string[] = kind === 'stopLoss' ? STOP_LOSS_TYPES : TAKE_PROFIT_TYPES;
  if (type === undefined || type === null) throw new LevelError(`${kind} must come with ${kind}Type`);
  if (typeof type !== 'string' || !allowed.includes(type))
    throw new LevelError(`${kind}Type must be one of ${allowed.join(', ')}`);
  if (type === 'absolute') return value;
  if (value.lte(0)) throw new LevelError(`${kind} offset must be positive`);
  const distance = value.mul(pipSize(inst));
  // A stop loss sits against the position, a take profit in its favour.
  const up = (side === 'buy') === (kind === 'takeProfit');
  const level = up ? ref().plus(distance) : ref().minus(distance);
  return level.toNearest(inst.tickSize);
}
