import { describe, expect, it } from 'vitest';
import { dec } from '../../domain/decimal.js';
import { bucketStart, PriceHistory } from './price-history.js';

const quote = (iso: string, bid: string) => ({
  symbol: 'EURUSD',
  bid: dec(bid),
  ask: dec(bid).plus('0.0001'),
  time: iso,
});

describe('PriceHistory', () => {
  it('aggregates minute bars into the day and into hours, counting price updates', () => {
    const h = new PriceHistory();
    h.record(quote('2026-01-05T09:00:10Z', '1.1000'));
    h.record(quote('2026-01-05T09:00:10Z', '1.1000')); // the same update seen twice counts once
    h.record(quote('2026-01-05T09:30:00Z', '1.1050'));
    h.record(quote('2026-01-05T10:15:00Z', '1.0950'));
    h.record(quote('2026-01-05T11:59:00Z', '1.1010'));
    const now = Date.parse('2026-01-05T11:59:00Z');
    expect(h.series('EURUSD', '1D', bucketStart('1D', now), now)).toEqual([
      { t: Date.parse('2026-01-05T00:00:00Z'), o: 1.1, h: 1.105, l: 1.095, c: 1.101, v: 4 },
    ]);
    const hours = h.series('EURUSD', '1H', Date.parse('2026-01-05T09:00:00Z'), now, 'ASK');
    expect(hours.map((b) => [new Date(b.t).toISOString().slice(11, 16), b.o, b.c, b.v])).toEqual([
      ['09:00', 1.1001, 1.1051, 2],
      ['10:00', 1.0951, 1.0951, 1],
      ['11:00', 1.1011, 1.1011, 1],
    ]);
    expect(h.series('EURUSD', '1m', 0, Date.parse('2026-01-05T08:00:00Z'))).toEqual([]);
  });

  it('starts weeks on Monday and months on the 1st (UTC)', () => {
    expect(new Date(bucketStart('1W', Date.parse('2026-01-08T12:00:00Z'))).toISOString()).toBe(
      '2026-01-05T00:00:00.000Z',
    );
    expect(new Date(bucketStart('1M', Date.parse('2026-02-17T12:00:00Z'))).toISOString()).toBe(
      '2026-02-01T00:00:00.000Z',
    );
  });
});
