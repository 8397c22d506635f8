import { describe, expect, it } from 'vitest';
import { ago, latencyPhases, latencyTotal, money, ms, num, shortId, signed, tone } from './format';

describe('format', () => {
  it('money: two decimals, thousands, currency, and a dash for nothing', () => {
    expect(money(10000, 'USD')).toBe('10,000.00 USD');
    expect(money(-3.456)).toBe('-3.46');
    expect(money(null)).toBe('–');
  });
  it('num: no float noise, no trailing zeros', () => {
    expect(num(0.1 + 0.2)).toBe('0.3');
    expect(num(1.0801400001)).toBe('1.08014');
    expect(num(2)).toBe('2');
    expect(signed(0.00002)).toBe('+0.00002');
    expect(signed(-1)).toBe('-1');
  });
  it('latency: a number, or the sum of the phases', () => {
    expect(latencyTotal(12.5)).toBe(12.5);
    expect(latencyTotal({ plan: 5, record: 20, send: 3, ack: 0.5 })).toBe(28.5);
    expect(latencyTotal({ note: 'x' })).toBeNull();
    expect(latencyTotal(null)).toBeNull();
    expect(latencyPhases({ plan: 5.81, ack: 1200 })).toBe('plan 5.8 ms, ack 1.20 s');
    expect(ms(3.14159)).toBe('3.1 ms');
    expect(ms(250.4)).toBe('250 ms');
  });
  it('ago and ids', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    expect(ago('2026-01-01T00:09:58Z', now)).toBe('just now');
    expect(ago('2026-01-01T00:09:00Z', now)).toBe('1 min ago');
    expect(ago('2026-01-01T00:00:00Z', now)).toBe('10 min ago');
    expect(shortId('acc_0mwrccu8gu1goshjzu1kisc8d')).toBe('acc_…kisc8d');
  });
  it('tone of status words', () => {
    expect(tone('connected')).toBe('good');
    expect(tone('skipped')).toBe('warn');
    expect(tone('reconnect_required')).toBe('bad');
    expect(tone('whatever')).toBe('muted');
  });
});
