import { Decimal, decOrNull } from '../../domain/decimal.js';
import type { InstrumentSpec } from '../../domain/types.js';

/** A ledger row's sizing record as stored (domain/receipts/sizing-record.ts): decimals as strings. */
export interface StoredSizing {
  input: Record<string, string | null | undefined>;
  spec: Record<string, string>;
  result: { volume?: string; reason?: string };
  guard?: { volume?: string; denied?: string };
}

const SPEC_DECIMALS = ['volumeStep', 'minVolume', 'maxVolume', 'contractSize', 'tickSize'] as const;

export function storedSizing(v: unknown): StoredSizing | null {
  const r = v as StoredSizing | null;
  return r && typeof r === 'object' && r.input && r.spec && r.result ? r : null;
}

/** The Slave broker's symbol specification as the row recorded it. */
export function recordedSpec(s: StoredSizing): InstrumentSpec {
  const spec = { symbol: s.spec.symbol } as InstrumentSpec;
  for (const k of SPEC_DECIMALS) spec[k] = new Decimal(s.spec[k] ?? '0');
  return spec;
}

export const recordedInput = (s: StoredSizing, k: string): Decimal | null => decOrNull(s.input[k] ?? null);
