import { describe, expect, it } from 'vitest';
import { barChart, lineChart, ticks } from '../../bench/svg.js';

describe('svg charts', () => {
  it('ticks cover the range with round steps', () => {
    expect(ticks(0, 23.5)).toEqual([0, 5, 10, 15, 20, 25]);
    expect(ticks(0, 100)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(ticks(1, 3, 2)).toEqual([1, 2, 3]);
  });

  it('draws every point of a line inside the plot, and escapes text', () => {
    const svg = lineChart({
      title: 'a < b & c',
      xLabel: 'minute',
      yLabel: 'ms',
      series: [
        {
          name: 'p50',
          points: [
            [1, 10],
            [2, 30],
            [3, 20],
          ],
        },
      ],
    });
    expect(svg).toContain('a &lt; b &amp; c');
    const ys = [...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(ys).toHaveLength(3);
    for (const [x, y] of ys) {
      expect(x).toBeGreaterThanOrEqual(70);
      expect(x).toBeLessThanOrEqual(700);
      expect(y).toBeGreaterThanOrEqual(40);
      expect(y).toBeLessThanOrEqual(320);
    }
    // The highest value is the highest point (smallest y).
    expect(ys[1]![1]).toBeLessThan(ys[2]![1]!);
  });

  it('draws bars no taller than the plot, the tallest for the largest value', () => {
    const svg = barChart({
      title: 't',
      yLabel: 's',
      groups: [
        {
          label: 'g',
          bars: [
            { name: 'a', value: 22.4 },
            { name: 'b', value: 20 },
          ],
        },
      ],
    });
    const bars = [...svg.matchAll(/<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(bars).toHaveLength(2);
    for (const [y] of bars) expect(y).toBeGreaterThanOrEqual(40);
    expect(bars[0]![1]).toBeGreaterThan(bars[1]![1]!);
    expect(svg).toContain('>22.4<');
  });
});
