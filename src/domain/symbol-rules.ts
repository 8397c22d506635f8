import { Decimal } from './decimal.js';

/**
 * A Slave's rule for one Master symbol, over its general rule: off (`copy: false`), or sized by its own multiplier
 * or fixed volume, or capped by its own maximum volume. Decimals as strings, like the rule's.
 */
export interface SymbolOverride {
  /** false: this symbol is not copied (symbol_off). */
  copy?: boolean;
  /** Sizes this symbol's copies as Master volume x multiplier, whatever the rule's sizing. */
  multiplier?: string;
  /** Sizes this symbol's copies at this volume, whatever the rule's sizing. */
  volume?: string;
  /** This symbol's copies are at most this volume (instead of the rule's maxVolume). */
  maxVolume?: string;
  /** This symbol's slippage bound in points of its tick size (instead of the rule's maxSlippage/maxSlippagePoints). */
  maxSlippagePoints?: string;
}

/**
 * Beside the explicit symbol map: the Master's symbol without `masterSymbolPrefix`/`masterSymbolSuffix` (when it has
 * them), with `symbolPrefix`/`symbolSuffix` added, e.g. suffix ".m": EURUSD -> EURUSD.m, or master suffix ".a" and
 * suffix "pro": EURUSD.a -> EURUSDpro.
 */
export interface SymbolAffixes {
  symbolPrefix: string;
  symbolSuffix: string;
  masterSymbolPrefix: string;
  masterSymbolSuffix: string;
}

export const MAX_AFFIX = 16;
export const MAX_OVERRIDES = 500;

/** True when the affixes change no symbol: the mapping's fast path. */
export const noAffixes = (a: SymbolAffixes): boolean =>
  a.symbolPrefix === '' && a.symbolSuffix === '' && a.masterSymbolPrefix === '' && a.masterSymbolSuffix === '';

export function affixed(a: SymbolAffixes, masterSymbol: string): string {
  let core = masterSymbol;
  if (a.masterSymbolPrefix && core.startsWith(a.masterSymbolPrefix)) core = core.slice(a.masterSymbolPrefix.length);
  if (a.masterSymbolSuffix && core.endsWith(a.masterSymbolSuffix))
    core = core.slice(0, core.length - a.masterSymbolSuffix.length);
  return `${a.symbolPrefix}${core}${a.symbolSuffix}`;
}

const positive = (v: unknown, name: string, problems: string[]) => {
  if (v === undefined) return;
  let d: Decimal | null = null;
  try {
    d = new Decimal(v as string);
  } catch {
    /* reported below */
  }
  if (!d || !d.isFinite() || d.lte(0)) problems.push(`${name} must be a decimal number greater than 0`);
};

/** The problems of the affixes and the per-symbol overrides, naming each field (symbolOverrides.XAUUSD.volume). */
export function symbolRuleProblems(a: SymbolAffixes, overrides: Record<string, SymbolOverride>): string[] {
  const problems: string[] = [];
  for (const k of ['symbolPrefix', 'symbolSuffix', 'masterSymbolPrefix', 'masterSymbolSuffix'] as const)
    if (typeof a[k] !== 'string' || a[k].length > MAX_AFFIX || /\s/.test(a[k]))
      problems.push(`${k} must be at most ${MAX_AFFIX} characters without spaces`);
  const entries = Object.entries(overrides);
  if (entries.length > MAX_OVERRIDES) problems.push(`symbolOverrides may hold at most ${MAX_OVERRIDES} symbols`);
  for (const [symbol, o] of entries) {
    const at = `symbolOverrides.${symbol}`;
    positive(o.multiplier, `${at}.multiplier`, problems);
    positive(o.volume, `${at}.volume`, problems);
    positive(o.maxVolume, `${at}.maxVolume`, problems);
    positive(o.maxSlippagePoints, `${at}.maxSlippagePoints`, problems);
    if (o.multiplier !== undefined && o.volume !== undefined)
      problems.push(`${at} takes a multiplier or a volume, not both`);
    if (o.copy === false && (o.multiplier ?? o.volume ?? o.maxVolume ?? o.maxSlippagePoints) !== undefined)
      problems.push(`${at} is off (copy false): it takes no sizing`);
  }
  return problems;
}
