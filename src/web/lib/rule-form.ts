import type { CopyRule, CopyRulePatch } from '../api/types';
import { overridesToText, textToOverrides } from './symbol-overrides-form';

/**
 * The copy-rule form's fields as text, and the checks the dashboard makes before sending; the server checks
 * again against the Slave adapter's capabilities and its 400 reasons are shown as they come.
 */
export type SizingMode = 'multiplier' | 'fixed' | 'balance_ratio' | 'equity_ratio' | 'risk_percent';
export interface RuleForm {
  mode: SizingMode;
  multiplier: string;
  volume: string;
  /** risk_percent: % of the Slave equity the copy may lose at its stop. */
  riskPercent: string;
  minVolume: string;
  maxVolume: string;
  symbolMap: string;
  includeSymbols: string;
  excludeSymbols: string;
  reverse: boolean;
  copyStopLoss: boolean;
  copyTakeProfit: boolean;
  copyPendingOrders: boolean;
  maxDelayMs: string;
  /** Price units; empty = no limit. */
  maxSlippage: string;
  /** Points of each symbol's tick size; empty = no limit. */
  maxSlippagePoints: string;
  /** Which of the Master's trades by side: both, buy only, sell only. */
  sides: 'both' | 'buy' | 'sell';
  /** Magic numbers, comma separated. */
  includeMagic: string;
  excludeMagic: string;
  /** Parts of the trade comment, comma separated. */
  includeComments: string;
  excludeComments: string;
  /** One symbol a line: `XAUUSD off`, `XAUUSD multiplier=0.5 maxVolume=2`. */
  symbolOverrides: string;
  symbolPrefix: string;
  symbolSuffix: string;
  masterSymbolPrefix: string;
  masterSymbolSuffix: string;
  /** Account currency; empty = no minimum. */
  minTradeAmount: string;
}
export type RuleErrors = Partial<Record<keyof RuleForm, string>>;

const DEC = /^[0-9]+(\.[0-9]+)?$/;
const SYMBOL = /^[A-Za-z0-9._/#-]{1,32}$/;

/** A decimal of an answer (a JSON number) as the form's text; empty when there is none. */
const text = (v: number | null | undefined): string => (v === null || v === undefined ? '' : String(v));

export function ruleToForm(r: CopyRule): RuleForm {
  const s = r.sizing as { mode: SizingMode; multiplier?: number; volume?: number; riskPercent?: number };
  return {
    mode: s.mode,
    multiplier: s.multiplier === undefined ? (s.mode === 'multiplier' ? '1' : '') : text(s.multiplier),
    volume: text(s.volume),
    riskPercent: text(s.riskPercent),
    minVolume: text(r.minVolume),
    maxVolume: text(r.maxVolume),
    symbolMap: Object.entries(r.symbolMap)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
    includeSymbols: r.includeSymbols.join(', '),
    excludeSymbols: r.excludeSymbols.join(', '),
    reverse: r.reverse,
    copyStopLoss: r.copyStopLoss,
    copyTakeProfit: r.copyTakeProfit,
    copyPendingOrders: r.copyPendingOrders,
    maxDelayMs: String(r.maxDelayMs),
    maxSlippage: text(r.maxSlippage),
    maxSlippagePoints: text(r.maxSlippagePoints),
    sides: r.sides ?? 'both',
    includeMagic: (r.includeMagic ?? []).join(', '),
    excludeMagic: (r.excludeMagic ?? []).join(', '),
    includeComments: (r.includeComments ?? []).join(', '),
    excludeComments: (r.excludeComments ?? []).join(', '),
    symbolOverrides: overridesToText(r.symbolOverrides),
    symbolPrefix: r.symbolPrefix ?? '',
    symbolSuffix: r.symbolSuffix ?? '',
    masterSymbolPrefix: r.masterSymbolPrefix ?? '',
    masterSymbolSuffix: r.masterSymbolSuffix ?? '',
    minTradeAmount: text(r.minTradeAmount),
  };
}

const list = (s: string) =>
  s
    .split(/[\s,;]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The form as the rule the server takes, or the reasons it cannot be sent (per field). Decimals go as the text
 * typed (the API takes a number or a decimal string), so nothing is rounded through a float on the way.
 */
export function formToRule(f: RuleForm): { rule: Required<CopyRulePatch> | null; errors: RuleErrors } {
  const errors: RuleErrors = {};
  const dec = (
    field: keyof RuleForm,
    v: string,
    opts: { required?: boolean; positive?: boolean } = {},
  ): string | null => {
    const t = v.trim();
    if (!t) {
      if (opts.required) errors[field] = 'required';
      return null;
    }
    if (!DEC.test(t)) {
      errors[field] = 'a plain decimal, like 0.5';
      return null;
    }
    if (opts.positive && Number(t) <= 0) errors[field] = 'must be more than 0';
    return t;
  };

  let sizing: Required<CopyRulePatch>['sizing'];
  if (f.mode === 'fixed')
    sizing = { mode: 'fixed', volume: dec('volume', f.volume, { required: true, positive: true }) ?? '' };
  else if (f.mode === 'multiplier')
    sizing = {
      mode: 'multiplier',
      multiplier: dec('multiplier', f.multiplier, { required: true, positive: true }) ?? '',
    };
  else if (f.mode === 'risk_percent') {
    const pct = dec('riskPercent', f.riskPercent, { required: true, positive: true });
    if (pct && !errors.riskPercent && Number(pct) > 100) errors.riskPercent = 'at most 100';
    if (!f.copyStopLoss) errors.copyStopLoss = 'risk sizing measures the risk to the copied stop loss: keep it on';
    sizing = { mode: 'risk_percent', riskPercent: pct ?? '' };
  } else {
    const m = dec('multiplier', f.multiplier, { positive: true });
    sizing = m ? { mode: f.mode, multiplier: m } : { mode: f.mode };
  }
  const minVolume = dec('minVolume', f.minVolume, { positive: true });
  const maxSlippage = dec('maxSlippage', f.maxSlippage, { positive: true });
  const maxSlippagePoints = dec('maxSlippagePoints', f.maxSlippagePoints, { positive: true });
  if (maxSlippage && maxSlippagePoints) errors.maxSlippagePoints = 'give a price distance or points, not both';
  const maxVolume = dec('maxVolume', f.maxVolume, { positive: true });
  if (minVolume && maxVolume && !errors.minVolume && !errors.maxVolume && Number(minVolume) > Number(maxVolume))
    errors.maxVolume = 'must not be below the minimum volume';

  const symbolMap: Record<string, string> = {};
  for (const [i, line] of f.symbolMap.split('\n').entries()) {
    const t = line.trim();
    if (!t) continue;
    const m = /^([^=>\s]+)\s*(?:=|->|=>)\s*([^=>\s]+)$/.exec(t);
    if (!m || !SYMBOL.test(m[1]!) || !SYMBOL.test(m[2]!)) {
      errors.symbolMap = `line ${i + 1}: write MASTER=SLAVE, e.g. EURUSD=EURUSD.m`;
      break;
    }
    symbolMap[m[1]!] = m[2]!;
  }
  const includeSymbols = list(f.includeSymbols);
  const excludeSymbols = list(f.excludeSymbols);
  for (const [field, syms] of [
    ['includeSymbols', includeSymbols],
    ['excludeSymbols', excludeSymbols],
  ] as const) {
    const bad = syms.find((s) => !SYMBOL.test(s));
    if (bad) errors[field] = `"${bad}" is not a symbol`;
  }
  const both = includeSymbols.filter((s) => excludeSymbols.includes(s));
  if (both.length && !errors.excludeSymbols) errors.excludeSymbols = `${both.join(', ')} both included and excluded`;

  const magic = (field: 'includeMagic' | 'excludeMagic'): number[] => {
    const ms = list(f[field]);
    const bad = ms.find((m) => !/^\d{1,15}$/.test(m));
    if (bad) errors[field] = `"${bad}" is not a magic number (a whole number)`;
    return bad ? [] : ms.map(Number);
  };
  const includeMagic = magic('includeMagic');
  const excludeMagic = magic('excludeMagic');
  const twice = includeMagic.filter((m) => excludeMagic.includes(m));
  if (twice.length && !errors.excludeMagic) errors.excludeMagic = `${twice.join(', ')} both included and excluded`;
  // Comments hold spaces ("Grid EA"): only commas separate them.
  const parts = (v: string) =>
    v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const includeComments = parts(f.includeComments);
  const excludeComments = parts(f.excludeComments);
  for (const field of ['includeComments', 'excludeComments'] as const)
    if (parts(f[field]).some((c) => c.length > 64)) errors[field] = 'each part at most 64 characters';

  const { overrides: symbolOverrides, error: overridesError } = textToOverrides(f.symbolOverrides);
  if (overridesError) errors.symbolOverrides = overridesError;
  const affixes = {
    symbolPrefix: f.symbolPrefix.trim(),
    symbolSuffix: f.symbolSuffix.trim(),
    masterSymbolPrefix: f.masterSymbolPrefix.trim(),
    masterSymbolSuffix: f.masterSymbolSuffix.trim(),
  };
  for (const [k, v] of Object.entries(affixes) as Array<[keyof typeof affixes, string]>)
    if (v.length > 16 || /\s/.test(v)) errors[k] = 'at most 16 characters, no spaces';
  const minTradeAmount = dec('minTradeAmount', f.minTradeAmount, { positive: true });

  const delay = f.maxDelayMs.trim();
  if (!/^\d+$/.test(delay) || Number(delay) > 86_400_000) errors.maxDelayMs = 'whole milliseconds, 0 to 86400000';

  if (Object.keys(errors).length) return { rule: null, errors };
  return {
    rule: {
      sizing,
      minVolume,
      maxVolume,
      symbolMap,
      includeSymbols,
      excludeSymbols,
      reverse: f.reverse,
      copyStopLoss: f.copyStopLoss,
      copyTakeProfit: f.copyTakeProfit,
      copyPendingOrders: f.copyPendingOrders,
      maxDelayMs: Number(delay),
      maxSlippage,
      maxSlippagePoints,
      sides: f.sides,
      includeMagic,
      excludeMagic,
      includeComments,
      excludeComments,
      symbolOverrides,
      ...affixes,
      minTradeAmount,
    },
    errors,
  };
}

/** One line about a rule, for the groups table. */
export function describeRule(r: CopyRule): string {
  const s = r.sizing as { mode: SizingMode; multiplier?: number; volume?: number; riskPercent?: number };
  const size =
    s.mode === 'multiplier'
      ? `x${s.multiplier}`
      : s.mode === 'fixed'
        ? `fixed ${s.volume}`
        : s.mode === 'risk_percent'
          ? `risk ${s.riskPercent}% at the stop`
          : `${s.mode.replace('_', ' ')}${s.multiplier ? ` x${s.multiplier}` : ''}`;
  const parts = [size];
  if (r.reverse) parts.push('reverse');
  if (r.maxSlippage) parts.push(`slippage ≤ ${r.maxSlippage}`);
  if (r.maxSlippagePoints) parts.push(`slippage ≤ ${r.maxSlippagePoints} points`);
  if (r.minVolume || r.maxVolume) parts.push(`volume ${r.minVolume ?? '0'}..${r.maxVolume ?? '∞'}`);
  if (Object.keys(r.symbolMap).length) parts.push(`${Object.keys(r.symbolMap).length} mapped`);
  if (r.symbolSuffix || r.symbolPrefix) parts.push(`symbols ${r.symbolPrefix ?? ''}…${r.symbolSuffix ?? ''}`);
  if (Object.keys(r.symbolOverrides ?? {}).length)
    parts.push(`${Object.keys(r.symbolOverrides).length} symbol override(s)`);
  if (r.minTradeAmount) parts.push(`amount ≥ ${r.minTradeAmount}`);
  if (r.includeSymbols.length) parts.push(`only ${r.includeSymbols.join(', ')}`);
  if (r.excludeSymbols.length) parts.push(`not ${r.excludeSymbols.join(', ')}`);
  if (r.sides && r.sides !== 'both') parts.push(`${r.sides}s only`);
  if (r.includeMagic?.length) parts.push(`magic ${r.includeMagic.join(', ')}`);
  if (r.excludeMagic?.length) parts.push(`not magic ${r.excludeMagic.join(', ')}`);
  if (r.includeComments?.length) parts.push(`comment has ${r.includeComments.join(' or ')}`);
  if (r.excludeComments?.length) parts.push(`comment lacks ${r.excludeComments.join(', ')}`);
  return parts.join(' · ');
}
