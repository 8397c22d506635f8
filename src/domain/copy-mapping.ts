import { type Decimal, roundToStep } from './decimal.js';
import type { CopyRule } from './copy-rule.js';
import type { InstrumentSpec, Side } from './types.js';

/**
 * How a Master's trade reads on a Slave by its rule, for follow-ups as for opens: the mapped symbol, the side
 * (reversed copies trade the other way), the protective levels (reversed: the Master's stop is the Slave's
 * target) and prices on the Slave broker's tick grid (off-grid levels are refused there).
 */
export const slaveSymbol = (rule: CopyRule, masterSymbol: string): string =>
  rule.symbolMap[masterSymbol] ?? masterSymbol;

export const opposite = (s: Side): Side => (s === 'buy' ? 'sell' : 'buy');

export const copySide = (rule: CopyRule, side: Side): Side => (rule.reverse ? opposite(side) : side);

/** [stop loss, take profit] as the copy carries them (before the rule's copyStopLoss/copyTakeProfit switches). */
export const copyLevels = (
  rule: CopyRule,
  stopLoss: Decimal | null,
  takeProfit: Decimal | null,
): [Decimal | null, Decimal | null] => (rule.reverse ? [takeProfit, stopLoss] : [stopLoss, takeProfit]);

/** A price on the spec's tick grid; without a spec (the broker does not list the symbol) it stays as it is. */
export const onTickGrid = (v: Decimal | null, spec: InstrumentSpec | null): Decimal | null =>
  v === null || !spec ? v : roundToStep(v, spec.tickSize);
