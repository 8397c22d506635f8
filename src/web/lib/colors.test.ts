import { describe, expect, it } from 'vitest';
import { seriesColor } from './colors';

describe('seriesColor', () => {
  it('gives 60 series 60 different colours', () => {
    const all = Array.from({ length: 60 }, (_, i) => seriesColor(i));
    expect(new Set(all).size).toBe(60);
  });
});
