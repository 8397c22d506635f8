import { describe, expect, it } from 'vitest';
import { dec, isMultipleOf } from '../domain/decimal.js';
import { defaultInstruments } from './instruments.js';
import { Market, SeededRandom } from './market.js';

const now = () => new Date('2026-01-01T00:00:00Z');
const walk = (m: Market, steps: number) => Array.from({ length: steps }, () => (m.step(), m.mid('EURUSD').toString()));

describe('SeededRandom', () => {
  it('repeats for the same seed and differs for another', () => {
    const a = new SeededRandom(42);
    const b = new SeededRandom(42);
    const c = new SeededRandom(43);
    const xs = [a.next(), a.next(), a.next()];
    expect([b.next(), b.next(), b.next()]).toEqual(xs);
    expect(c.next()).not.toBe(xs[0]);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });
});

describe('Market', () => {
  it('quotes a spread of spreadTicks around the mid, on the tick grid', () => {
    const m = new Market(defaultInstruments(), now);
    for (const d of defaultInstruments()) {
      const q = m.quote(d.symbol);
      expect(q.ask.minus(q.bid).eq(d.tickSize.mul(d.spreadTicks))).toBe(true);
      expect(isMultipleOf(q.bid, d.tickSize)).toBe(true);
      expect(q.bid.lt(m.mid(d.symbol)) && q.ask.gt(m.mid(d.symbol))).toBe(true);
    }
    expect(m.quote('EURUSD').bid.toString()).toBe('1.07997');
    expect(m.quote('EURUSD').ask.toString()).toBe('1.08003');
  });

  it('rounds a set mid to the tick and keeps the bid positive', () => {
    const m = new Market(defaultInstruments(), now);
    m.setMid('USDJPY', '151.23456');
    expect(m.mid('USDJPY').toString()).toBe('151.235');
    m.setMid('EURUSD', '-5');
    expect(m.quote('EURUSD').bid.gt(0)).toBe(true);
  });

  it('walks deterministically by seed, moving prices on the tick grid', () => {
    const a = walk(new Market(defaultInstruments(), now, { seed: 7 }), 50);
    const b = walk(new Market(defaultInstruments(), now, { seed: 7 }), 50);
    const c = walk(new Market(defaultInstruments(), now, { seed: 8 }), 50);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(new Set(a).size).toBeGreaterThan(10);
    for (const p of a) expect(isMultipleOf(dec(p), dec('0.00001'))).toBe(true);
  });

  it('resumes the same walk from a snapshot', () => {
    const whole = new Market(defaultInstruments(), now, { seed: 3 });
    walk(whole, 20);
    const resumed = new Market(defaultInstruments(), now, { snapshot: JSON.parse(JSON.stringify(whole.snapshot())) });
    expect(resumed.mid('XAUUSD').eq(whole.mid('XAUUSD'))).toBe(true);
    expect(walk(resumed, 20)).toEqual(walk(whole, 20));
  });

  it('refuses unknown symbols', () => {
    const m = new Market(defaultInstruments(), now);
    expect(m.has('FOO')).toBe(false);
    expect(() => m.quote('FOO')).toThrow(/unknown symbol/);
  });
});
