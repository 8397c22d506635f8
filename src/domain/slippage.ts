import { Decimal } from './decimal.js';
import type { CopyRule } from './copy-rule.js';
import type { SkipReason } from './sizing.js';
import type { InstrumentSpec, Side } from './types.js';

/** A rule's slippage bound for one Slave symbol: a price distance, or points of the symbol's tick size. */
export interface SlippageBound {
  max: Decimal;
  /** How the bound reads in a ledger row's detail: `maxSlippage 0.0005`, and as a setting `maxSlippage is 0.0005`. */
  label: string;
  setting: string;
}

/** The bound of a rule (already the one for the copy's symbol) on a symbol; null when the rule sets none. */
export function slippageBound(rule: CopyRule, spec: InstrumentSpec): SlippageBound | null {
  if (rule.maxSlippage) {
    const max = new Decimal(rule.maxSlippage);
    return { max, label: `maxSlippage ${max}`, setting: `maxSlippage is ${max}` };
  }
  if (!rule.maxSlippagePoints) return null;
  const max = spec.tickSize.mul(rule.maxSlippagePoints);
  const points = `maxSlippagePoints ${rule.maxSlippagePoints} x tick ${spec.tickSize} = ${max}`;
  return { max, label: points, setting: `${points} for ${spec.symbol}` };
}

/**
 * The slippage guard: how much worse than the Master's fill the Slave's price for the copy's side is
 * (positive = worse: a higher ask to buy, a lower bid to sell). Past the limit, or not measurable, the copy
 * is skipped: the user asked for a bound, and a copy we cannot check against it is not sent blind.
 */
export function slippageCheck(
  side: Side,
  slavePrice: Decimal | null,
  masterFill: Decimal | null,
  { max, label, setting }: SlippageBound,
): { reason: SkipReason; detail: string } | null {
  if (!slavePrice)
    return {
      reason: 'slippage_unknown',
      detail: `${setting}, but the Slave's broker gave no price to check it against`,
    };
  if (!masterFill)
    return { reason: 'slippage_unknown', detail: `${setting}, but the Master's fill price is not known` };
  const worse = side === 'buy' ? slavePrice.minus(masterFill) : masterFill.minus(slavePrice);
  if (worse.lte(max)) return null;
  return {
    reason: 'slippage_exceeded',
    detail: `the Slave's ${side === 'buy' ? 'ask' : 'bid'} ${slavePrice} is ${worse} worse than the Master's fill ${masterFill} (${label})`,
  };
}
