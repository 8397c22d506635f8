import { Decimal, floorToStep } from './decimal.js';
import type { CopyRule } from './copy-rule.js';
import type { InstrumentSpec } from './types.js';
import { slaveSymbol } from './copy-mapping.js';
import type { FilterSkip } from './trade-filters.js';

export interface SizingInput {
  masterVolume: Decimal;
  masterBalance?: Decimal | null;
  masterEquity?: Decimal | null;
  slaveBalance?: Decimal | null;
  slaveEquity?: Decimal | null;
  /** risk_percent: where the copy is expected to enter (the Slave's price for its side, else the Master's). */
  entryPrice?: Decimal | null;
  /** risk_percent: the stop loss the copy will carry (null when it carries none). */
  stopLoss?: Decimal | null;
  /** risk_percent: account-currency value of one unit of the symbol's quote currency (default 1). */
  quoteToAccount?: Decimal | null;
}

export type SizingResult = { ok: true; volume: Decimal } | { ok: false; reason: SkipReason; detail: string };

/** Machine-readable reasons a copy was not sent; each one appears in the ledger. */
export type SkipReason =
  | 'symbol_excluded'
  | 'symbol_not_included'
  | 'unknown_symbol'
  | 'volume_below_minimum'
  | 'missing_account_data'
  | 'slave_not_eligible'
  | 'pending_orders_off'
  | 'stale_action'
  | 'not_supported'
  | 'no_linked_position'
  | 'broker_unavailable'
  /** The Slave's platform cannot do what the copy needs (a `has` flag of its capabilities is false). */
  | 'capability_missing'
  /** risk_percent sizing without a stop loss on the copy (none on the Master's trade, or copyStopLoss off). */
  | 'no_stop_loss'
  /** The Slave's price for the copy's side is worse than the Master's fill by more than the rule's maxSlippage. */
  | 'slippage_exceeded'
  /** maxSlippage is set but there is no Slave quote or no Master fill price to compare. */
  | 'slippage_unknown'
  /** The rule's side, magic number or comment filter does not copy the Master's trade (trade-filters.ts). */
  | FilterSkip
  /** The rule's override for the Master's symbol turns it off (symbolOverrides.X.copy false). */
  | 'symbol_off'
  /** The copy's value in the Slave's account currency is below the rule's minTradeAmount. */
  | 'trade_amount_below_minimum'
  /** minTradeAmount is set but there is no price to value the copy at. */
  | 'trade_amount_unknown';

/**
 * Sizes a copy by the rule, then rounds DOWN to the broker's step (never more than the rule allows) and
 * clamps into the rule's and the broker's limits. Below the minimum after rounding it is a skip, not a
 * silent upsize: an unexpected bigger trade is worse than a missing small one.
 */
export function sizeVolume(rule: CopyRule, input: SizingInput, spec: InstrumentSpec): SizingResult {
  const s = rule.sizing;
  let raw: Decimal;
  switch (s.mode) {
    case 'multiplier':
      raw = input.masterVolume.mul(s.multiplier);
      break;
    case 'fixed':
      raw = new Decimal(s.volume);
      break;
    case 'balance_ratio':
    case 'equity_ratio': {
      const [m, sl] =
        s.mode === 'balance_ratio'
          ? [input.masterBalance, input.slaveBalance]
          : [input.masterEquity, input.slaveEquity];
      if (!m || !sl || m.lte(0))
        return {
          ok: false,
          reason: 'missing_account_data',
          detail: `${s.mode} needs both accounts' ${s.mode === 'balance_ratio' ? 'balance' : 'equity'}`,
        };
      raw = input.masterVolume.mul(sl.div(m)).mul(s.multiplier ?? '1');
      break;
    }
    case 'risk_percent': {
      const r = riskVolume(s.riskPercent, input, spec);
      if (!r.ok) return r;
      raw = r.volume;
      break;
    }
  }
  let v = raw;
  if (rule.maxVolume) v = Decimal.min(v, rule.maxVolume);
  v = Decimal.min(v, spec.maxVolume);
  v = floorToStep(v, spec.volumeStep);
  const floor = Decimal.max(spec.minVolume, rule.minVolume ?? 0);
  if (v.lt(floor)) {
    // A rule minimum lifts small copies up to it (the user asked for that explicitly).
    if (rule.minVolume && raw.gt(0)) {
      const lifted = floorToStep(Decimal.max(new Decimal(rule.minVolume), spec.minVolume), spec.volumeStep);
      if (lifted.gte(spec.minVolume) && lifted.lte(spec.maxVolume)) return { ok: true, volume: lifted };
    }
    return {
      ok: false,
      reason: 'volume_below_minimum',
      detail: `sized volume ${raw.toString()} rounds to ${v.toString()}, below the minimum ${floor.toString()}`,
    };
  }
  return { ok: true, volume: v };
}

/**
 * risk_percent: the volume that loses riskPercent % of the Slave's equity if the copy's stop is hit:
 * (riskPercent/100 x equity) / (|entry - stop| x contract size x quote-to-account rate), before rounding.
 */
function riskVolume(riskPercent: string, input: SizingInput, spec: InstrumentSpec): SizingResult {
  const { stopLoss, entryPrice, slaveEquity } = input;
  if (!stopLoss)
    return {
      ok: false,
      reason: 'no_stop_loss',
      detail:
        "risk_percent sizing needs a stop loss on the copy; the Master's trade has none (or the rule does not copy it)",
    };
  if (!entryPrice)
    return {
      ok: false,
      reason: 'missing_account_data',
      detail: 'risk_percent sizing needs an entry price (no Slave quote and no Master fill price)',
    };
  if (!slaveEquity || slaveEquity.lte(0))
    return { ok: false, reason: 'missing_account_data', detail: "risk_percent sizing needs the Slave's equity" };
  const distance = entryPrice.minus(stopLoss).abs();
  if (distance.isZero())
    return {
      ok: false,
      reason: 'no_stop_loss',
      detail: `the stop loss ${stopLoss} is at the entry price: the risk per lot is zero`,
    };
  const perLot = distance.mul(spec.contractSize).mul(input.quoteToAccount ?? 1);
  if (!perLot.gt(0))
    return {
      ok: false,
      reason: 'missing_account_data',
      detail: `no contract size for ${spec.symbol}: the loss per lot at the stop is unknown`,
    };
  const budget = slaveEquity.mul(riskPercent).div(100);
  // A rate like 1/150 is inexact in 20 digits: without this, 0.3 lot computes as 0.2999... and floors to 0.29.
  return { ok: true, volume: budget.div(perLot).toDecimalPlaces(10) };
}

/** Maps a master symbol to the Slave's, or says why it is not copied. */
export function mapSymbol(
  rule: CopyRule,
  masterSymbol: string,
): { ok: true; symbol: string } | { ok: false; reason: SkipReason; detail: string } {
  if (rule.excludeSymbols.includes(masterSymbol))
    return { ok: false, reason: 'symbol_excluded', detail: `${masterSymbol} is in the rule's exclude list` };
  if (rule.includeSymbols.length > 0 && !rule.includeSymbols.includes(masterSymbol)) {
    return { ok: false, reason: 'symbol_not_included', detail: `${masterSymbol} is not in the rule's include list` };
  }
  if (Object.hasOwn(rule.symbolOverrides, masterSymbol) && rule.symbolOverrides[masterSymbol]!.copy === false)
    return { ok: false, reason: 'symbol_off', detail: `${masterSymbol} is off in the rule's symbolOverrides` };
  return { ok: true, symbol: slaveSymbol(rule, masterSymbol) };
}
