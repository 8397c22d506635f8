import { type Decimal, roundToStep } from '../domain/decimal.js';

export type PartialClose =
  | { kind: 'partial'; volume: Decimal }
  /** `detail` set when rounding, not the Master, made it a full close (the ledger row carries it). */
  | { kind: 'full'; detail?: string }
  | { kind: 'skip'; reason: 'volume_below_minimum'; detail: string };

/**
 * How much of one Slave position to close when its Master closed `closed` of `masterBefore`: the same
 * fraction of the Slave's volume, rounded to the Slave's step (nearest, so proportions stay true on average).
 *
 * Policy at the edges:
 * - the rounded part is below the broker minimum: skip with a reason. The Slave keeps a little more than
 *   its share; the next reduce sizes from the Slave's real volume and the Master's full close closes it all,
 *   so the error does not accumulate. Closing a whole small position instead would cut far more than asked.
 * - what would remain is below the broker minimum (the broker refuses to leave such a rest): close fully.
 * - the Master's fraction is the whole position: close fully.
 */
export function proportionalClose(input: {
  masterBefore: Decimal;
  closed: Decimal;
  slaveVolume: Decimal;
  step: Decimal;
  minVolume: Decimal;
}): PartialClose {
  const { masterBefore, closed, slaveVolume, step, minVolume } = input;
  if (masterBefore.lte(0) || closed.gte(masterBefore)) return { kind: 'full' };
  const share = slaveVolume.mul(closed).div(masterBefore);
  const part = roundToStep(share, step);
  if (part.gte(slaveVolume))
    return {
      kind: 'full',
      detail: `the Slave's share ${share.toSignificantDigits(8).toString()} of ${slaveVolume.toString()} rounds to the whole position`,
    };
  if (part.lte(0) || part.lt(minVolume)) {
    return {
      kind: 'skip',
      reason: 'volume_below_minimum',
      detail: `the Slave's share ${share.toSignificantDigits(8).toString()} of ${slaveVolume.toString()} rounds to ${part.toString()}, below the minimum ${minVolume.toString()}`,
    };
  }
  if (slaveVolume.minus(part).lt(minVolume))
    return {
      kind: 'full',
      detail: `closing ${part.toString()} of ${slaveVolume.toString()} would leave less than the minimum ${minVolume.toString()}`,
    };
  return { kind: 'partial', volume: part };
}
