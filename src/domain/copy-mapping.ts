import { type Decimal, roundToStep } from './decimal.js';
import type { CopyRule } from './copy-rule.js';
import { affixed, noAffixes } from './symbol-rules.js';
import type { InstrumentSpec, Side } from './types.js';

/**
 * How a Master's trade reads on a Slave by its rule, for follow-ups as for opens: the mapped symbol, the side
 * (reversed copies trade the other way), the protective levels (reversed: the Master's stop is the Slave's
 * target) and prices on the Slave broker's tick grid (off-grid levels are refused there).
 */
export const slaveSymbol = (rule: CopyRule, masterSymbol: string): string =>
  (Object.hasOwn(rule.symbolMap, masterSymbol) ? rule.symbolMap[masterSymbol] : undefined) ??
  (noAffixes(rule) ? masterSymbol : affixed(rule, masterSymbol));

/** Each rule's rules per Master symbol, made once: the planner asks for every Slave of every copy. */
const bySymbol = new WeakMap<CopyRule, Map<string, CopyRule>>();

/**
 * The rule a copy of `masterSymbol` is planned under: the Slave's rule with its override for that symbol applied
 * (its multiplier or fixed volume as the sizing, its maximum volume, its slippage bound in points), or the rule
 * itself when it has none.
 */
export function ruleForSymbol(rule: CopyRule, masterSymbol: string): CopyRule {
  const o = Object.hasOwn(rule.symbolOverrides, masterSymbol) ? rule.symbolOverrides[masterSymbol] : undefined;
  if (o === undefined) return rule;
  let known = bySymbol.get(rule);
  if (!known) bySymbol.set(rule, (known = new Map()));
  let r = known.get(masterSymbol);
  if (!r) {
    r = { ...rule };
    if (o.multiplier !== undefined) r.sizing = { mode: 'multiplier', multiplier: o.multiplier };
    else if (o.volume !== undefined) r.sizing = { mode: 'fixed', volume: o.volume };
    if (o.maxVolume !== undefined) r.maxVolume = o.maxVolume;
    if (o.maxSlippagePoints !== undefined) {
      r.maxSlippagePoints = o.maxSlippagePoints;
      r.maxSlippage = null;
    }
    known.set(masterSymbol, r);
  }
  return r;
}

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
