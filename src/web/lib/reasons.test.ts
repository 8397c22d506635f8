import { describe, expect, it } from 'vitest';
import { describeReason } from './reasons';

describe('describeReason', () => {
  it('puts a ledger code in words and keeps the detail, without internal ids', () => {
    expect(describeReason('volume_below_minimum: 0.004 is under 0.01')).toEqual({
      text: 'volume below the broker minimum: 0.004 is under 0.01',
      code: 'volume_below_minimum',
    });
    expect(describeReason('master_not_eligible: the Master is paused (paused by the user)').text).toBe(
      'Master not copying: the Master is paused (paused by the user)',
    );
    expect(describeReason('slippage_exceeded').text).toBe('price moved more than allowed');
    expect(describeReason('something a broker said about acc_0mwsabcdef12')).toEqual({
      text: 'something a broker said about an account',
      code: null,
    });
  });
});
