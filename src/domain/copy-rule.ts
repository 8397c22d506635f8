import { Decimal } from './decimal.js';
import type { Capabilities } from './capabilities.js';
import { filterProblems, type TradeFilters } from './trade-filters.js';
import { symbolRuleProblems, type SymbolAffixes, type SymbolOverride } from './symbol-rules.js';

/**
 * How one Slave copies its Master. Stored as JSON (decimals as strings) and validated on save; the planner
 * applies it to every master action.
 */
export type Sizing =
  | { mode: 'multiplier'; multiplier: string }
  | { mode: 'fixed'; volume: string }
  /** volume x (slave balance / master balance) x multiplier */
  | { mode: 'balance_ratio'; multiplier?: string }
  /** volume x (slave equity / master equity) x multiplier */
  | { mode: 'equity_ratio'; multiplier?: string }
  /**
   * The volume whose loss at the copy's stop is riskPercent % of the Slave's equity. Needs a stop loss on the
   * Master's trade and copyStopLoss on; without one the copy is skipped (no_stop_loss).
   */
  | { mode: 'risk_percent'; riskPercent: string };

/**
 * `TradeFilters`: the Master's trades copied by side (`sides`), magic number and comment (include/exclude lists;
 * see trade-filters.ts), beside the symbol lists below.
 */
export interface CopyRule extends TradeFilters, SymbolAffixes {
  sizing: Sizing;
  minVolume: string | null;
  maxVolume: string | null;
  /** Master symbol -> Slave symbol, for broker suffixes like EURUSD -> EURUSD.m; before the affixes (SymbolAffixes). */
  symbolMap: Record<string, string>;
  /** Per Master symbol: off, or its own multiplier, fixed volume or maximum volume (symbol-rules.ts). */
  symbolOverrides: Record<string, SymbolOverride>;
  /**
   * A copy whose value (volume x contract size x price, in the Slave's account currency) is below this is not sent
   * (trade_amount_below_minimum). Null = no minimum.
   */
  minTradeAmount: string | null;
  /** When non-empty, only these master symbols are copied. */
  includeSymbols: string[];
  excludeSymbols: string[];
  reverse: boolean;
  copyStopLoss: boolean;
  copyTakeProfit: boolean;
  copyPendingOrders: boolean;
  /** A master action older than this is not copied (stale). */
  maxDelayMs: number;
  /**
   * Market copies only: the most the Slave's price for the copy's side (ask to buy, bid to sell) may be worse
   * than the Master's fill, in price units of the Slave's symbol (e.g. "0.0005" = 5 pips on EURUSD). Past it
   * the copy is skipped (slippage_exceeded). Null = no limit.
   */
  maxSlippage: string | null;
  /**
   * The same bound in points of the Slave symbol's tick size (the broker's last price digit): "50" is 0.0005 on a
   * 5-digit EURUSD, 0.05 on a 3-digit USDJPY, 0.5 on a 2-digit gold. Per symbol in symbolOverrides. Null = off; not
   * with maxSlippage.
   */
  maxSlippagePoints: string | null;
  /**
   * Set by the store, never by a request: the Slave's rule revision this rule is (rule_revisions.seq), named on the
   * ledger rows planned under it. Absent on a rule never saved (the defaults).
   */
  revision?: number;
}

/** The rule without the store's revision number: what a request sets and an answer shows. */
export function ruleOnly(rule: CopyRule): CopyRule {
  if (rule.revision === undefined) return rule;
  const { revision: _, ...rest } = rule;
  return rest;
}

export const DEFAULT_RULE: CopyRule = {
  sizing: { mode: 'multiplier', multiplier: '1' },
  minVolume: null,
  maxVolume: null,
  symbolMap: {},
  includeSymbols: [],
  excludeSymbols: [],
  reverse: false,
  copyStopLoss: true,
  copyTakeProfit: true,
  copyPendingOrders: true,
  maxDelayMs: 60_000,
  maxSlippage: null,
  maxSlippagePoints: null,
  symbolOverrides: {},
  symbolPrefix: '',
  symbolSuffix: '',
  masterSymbolPrefix: '',
  masterSymbolSuffix: '',
  minTradeAmount: null,
  sides: 'both',
  includeMagic: [],
  excludeMagic: [],
  includeComments: [],
  excludeComments: [],
};

/** Merges a partial rule onto the defaults (what the API accepts on create/update). */
export function withDefaults(partial: Partial<CopyRule> | undefined): CopyRule {
  return { ...DEFAULT_RULE, ...(partial ?? {}), sizing: partial?.sizing ?? DEFAULT_RULE.sizing };
}

/** One copy may not be sized to lose more than this share of the Slave's equity at its stop. */
export const MAX_RISK_PERCENT = 100;

const positive = (v: string | undefined | null, name: string, problems: string[]) => {
  if (v === undefined || v === null) return;
  let d: Decimal;
  try {
    d = new Decimal(v);
  } catch {
    problems.push(`${name} must be a decimal number, got ${JSON.stringify(v)}`);
    return;
  }
  if (!d.isFinite() || d.lte(0)) problems.push(`${name} must be greater than 0`);
};

/**
 * Every reason a rule cannot work, in words a user can act on. Checked against the Slave adapter's
 * capabilities (and the Master's, for the filters on what its trades carry), so an impossible rule is refused when
 * it is saved rather than failing at copy time.
 */
export function validateRule(
  rule: CopyRule,
  caps: Capabilities | null,
  masterCaps: Capabilities | null = null,
): string[] {
  const problems: string[] = [];
  const s = rule.sizing;
  if (s.mode === 'multiplier') positive(s.multiplier, 'sizing.multiplier', problems);
  else if (s.mode === 'fixed') positive(s.volume, 'sizing.volume', problems);
  else if (s.mode === 'balance_ratio' || s.mode === 'equity_ratio')
    positive(s.multiplier, 'sizing.multiplier', problems);
  else if (s.mode === 'risk_percent') {
    const before = problems.length;
    if (s.riskPercent === undefined) problems.push('sizing.riskPercent is required for risk_percent sizing');
    else positive(s.riskPercent, 'sizing.riskPercent', problems);
    if (problems.length === before && new Decimal(s.riskPercent).gt(MAX_RISK_PERCENT))
      problems.push(`sizing.riskPercent must be at most ${MAX_RISK_PERCENT}`);
    if (!rule.copyStopLoss)
      problems.push("risk_percent sizing needs copyStopLoss on: the copy's stop loss is what its risk is measured to");
  } else problems.push(`sizing.mode must be one of multiplier, fixed, balance_ratio, equity_ratio, risk_percent`);
  positive(rule.minVolume, 'minVolume', problems);
  positive(rule.maxVolume, 'maxVolume', problems);
  if (rule.minVolume && rule.maxVolume && problems.length === 0 && new Decimal(rule.minVolume).gt(rule.maxVolume)) {
    problems.push('minVolume must not be greater than maxVolume');
  }
  for (const sym of rule.includeSymbols)
    if (rule.excludeSymbols.includes(sym)) problems.push(`symbol ${sym} is both included and excluded`);
  if (!Number.isInteger(rule.maxDelayMs) || rule.maxDelayMs < 0)
    problems.push('maxDelayMs must be a non-negative integer');
  positive(rule.maxSlippage, 'maxSlippage', problems);
  positive(rule.maxSlippagePoints, 'maxSlippagePoints', problems);
  if (rule.maxSlippage && rule.maxSlippagePoints)
    problems.push('give maxSlippage (a price distance) or maxSlippagePoints (ticks of each symbol), not both');
  positive(rule.minTradeAmount, 'minTradeAmount', problems);
  problems.push(...filterProblems(rule, masterCaps));
  problems.push(...symbolRuleProblems(rule, rule.symbolOverrides));
  if (caps) {
    if (rule.copyPendingOrders && !caps.has.pendingOrders)
      problems.push(`copyPendingOrders is on, but ${caps.platform} accounts cannot take pending orders`);
    if (rule.copyStopLoss && !caps.has.stopLossOnOpen && !caps.has.modifyPositionSlTp)
      problems.push(`copyStopLoss is on, but ${caps.platform} accounts cannot carry a stop loss`);
    if (rule.copyTakeProfit && !caps.has.takeProfitOnOpen && !caps.has.modifyPositionSlTp)
      problems.push(`copyTakeProfit is on, but ${caps.platform} accounts cannot carry a take profit`);
    const points = Object.values(rule.symbolOverrides).some((o) => o.maxSlippagePoints !== undefined);
    const slipField = rule.maxSlippage
      ? 'maxSlippage'
      : rule.maxSlippagePoints
        ? 'maxSlippagePoints'
        : points
          ? 'symbolOverrides.*.maxSlippagePoints'
          : null;
    if (slipField && !caps.has.quotes)
      problems.push(`${slipField} is set, but ${caps.platform} accounts give no price quote to check it against`);
  }
  return problems;
}
