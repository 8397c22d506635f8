import { describe, expect, it } from 'vitest';
import { Decimal } from '../decimal.js';
import { DEFAULT_RULE, type CopyRule } from '../copy-rule.js';
import { sizeVolume } from '../sizing.js';
import { resize, sizingRecord } from './sizing-record.js';

const spec = {
  symbol: 'EURUSD',
  volumeStep: new Decimal('0.01'),
  minVolume: new Decimal('0.01'),
  maxVolume: new Decimal('100'),
  contractSize: new Decimal('100000'),
  tickSize: new Decimal('0.00001'),
};
/** As the row stores it: through JSON, decimals as strings. */
const stored = (r: unknown) => JSON.parse(JSON.stringify(r)) as unknown;

describe('sizing re-run from a receipt', () => {
  it('comes out exactly for a balance ratio, and not once an input is edited', () => {
    const rule: CopyRule = { ...DEFAULT_RULE, sizing: { mode: 'balance_ratio', multiplier: '1' } };
    const input = {
      masterVolume: new Decimal('1'),
      masterBalance: new Decimal('10000'),
      slaveBalance: new Decimal('2500'),
    };
    const sized = sizeVolume(rule, input, spec);
    const rec = stored(sizingRecord(rule, input, spec, sized)) as { input: Record<string, string> };
    expect(resize(rec, '0.25')).toBeNull();
    expect(resize(rec, '0.26')).toMatch(/planned volume is 0.26/);
    rec.input.slaveBalance = '2600';
    expect(resize(rec, '0.25')).toMatch(/gives 0.26, the receipt records 0.25/);
  });

  it('re-runs risk sizing with the quote-to-account rate, and a skip by its reason', () => {
    const rule: CopyRule = { ...DEFAULT_RULE, sizing: { mode: 'risk_percent', riskPercent: '1' } };
    const input = {
      masterVolume: new Decimal('1'),
      slaveEquity: new Decimal('10000'),
      entryPrice: new Decimal('150.00'),
      stopLoss: new Decimal('149.00'),
      quoteToAccount: new Decimal(1).div(150),
    };
    const sized = sizeVolume(rule, input, spec);
    expect(sized.ok).toBe(true);
    expect(
      resize(stored(sizingRecord(rule, input, spec, sized)), sized.ok ? sized.volume.toString() : null),
    ).toBeNull();
    const noStop = { ...input, stopLoss: null };
    const skipped = sizeVolume(rule, noStop, spec);
    expect(resize(stored(sizingRecord(rule, noStop, spec, skipped)), null)).toBeNull();
  });

  it("takes the risk guard's smaller volume as the planned one", () => {
    const input = { masterVolume: new Decimal('1') };
    const sized = sizeVolume(DEFAULT_RULE, input, spec);
    const rec = { ...sizingRecord(DEFAULT_RULE, input, spec, sized), guard: { volume: new Decimal('0.5') } };
    expect(resize(stored(rec), '0.5')).toBeNull();
    expect(resize(stored(rec), '1')).toMatch(/gives 0.5/);
  });
});
