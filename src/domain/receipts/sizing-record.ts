import { Decimal, decOrNull } from '../decimal.js';
import type { CopyRule } from '../copy-rule.js';
import type { InstrumentSpec } from '../types.js';
import { sizeVolume, type SizingInput, type SizingResult } from '../sizing.js';

/**
 * What one sizing read and decided, written with its ledger row at plan time (copy_intents.sizing_inputs) so a
 * receipt can be checked by running the sizing again: the parts of the rule the sizing reads, every input
 * (balances or equities, entry, stop, quote-to-account rate), the Slave broker's symbol specification, the
 * result, and what the risk guard did to it. Decimals are Decimal here and decimal strings once stored.
 */
export interface SizingRecord {
  v: 1;
  rule: Pick<CopyRule, 'sizing' | 'minVolume' | 'maxVolume'>;
  input: SizingInput;
  spec: InstrumentSpec;
  result: { volume: Decimal } | { reason: string };
  /** The risk guard's pre-trade check: a smaller volume it allowed, or its refusal code. Absent = passed as sized. */
  guard?: { volume: Decimal } | { denied: string };
}

export function sizingRecord(
  rule: CopyRule,
  input: SizingInput,
  spec: InstrumentSpec,
  sized: SizingResult,
): SizingRecord {
  return {
    v: 1,
    rule: { sizing: rule.sizing, minVolume: rule.minVolume, maxVolume: rule.maxVolume },
    input,
    spec,
    result: sized.ok ? { volume: sized.volume } : { reason: sized.reason },
  };
}

const INPUT_KEYS = [
  'masterVolume',
  'masterBalance',
  'masterEquity',
  'slaveBalance',
  'slaveEquity',
  'entryPrice',
  'stopLoss',
  'quoteToAccount',
] as const;
const SPEC_DECIMALS = ['volumeStep', 'minVolume', 'maxVolume', 'contractSize', 'tickSize'] as const;

type Stored = {
  rule: SizingRecord['rule'];
  input: Record<string, string | null | undefined>;
  spec: Record<string, string>;
  result: { volume?: string; reason?: string };
  guard?: { volume?: string; denied?: string };
};

/**
 * Runs the sizing again from a stored record and says what does not come out as recorded, or null when all of it
 * does: the sizing's volume (or skip reason) against the record's result, and the row's planned volume against the
 * result as the risk guard left it. `plannedVolume` is the ledger row's, as text.
 */
export function resize(stored: unknown, plannedVolume: string | null): string | null {
  const r = stored as Stored;
  if (!r || typeof r !== 'object' || !r.rule || !r.input || !r.spec || !r.result)
    return 'the sizing record is malformed';
  const input: SizingInput = { masterVolume: new Decimal(r.input.masterVolume ?? '0') };
  for (const k of INPUT_KEYS) if (k !== 'masterVolume') input[k] = decOrNull(r.input[k]);
  const spec = { symbol: r.spec.symbol } as InstrumentSpec;
  for (const k of SPEC_DECIMALS) spec[k] = new Decimal(r.spec[k] ?? '0');
  const rule = { ...r.rule } as CopyRule;
  const sized = sizeVolume(rule, input, spec);
  const recorded = r.result.volume ?? r.result.reason;
  const got = sized.ok ? sized.volume.toString() : sized.reason;
  if (sized.ok ? !r.result.volume || !sized.volume.eq(r.result.volume) : r.result.reason !== sized.reason)
    return `the sizing gives ${got}, the receipt records ${recorded}`;
  if (!sized.ok) return plannedVolume === null ? null : `a skipped sizing has a planned volume ${plannedVolume}`;
  const expected = r.guard?.volume ?? sized.volume.toString();
  if (plannedVolume === null || !new Decimal(plannedVolume).eq(expected))
    return `the sizing gives ${expected}, the row's planned volume is ${plannedVolume}`;
  return null;
}
