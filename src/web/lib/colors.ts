/**
 * A colour per chart series that never repeats: a hand-picked palette first, then hues a golden angle apart
 * (each new hue falls in the widest gap left), with lightness alternating so neighbours differ in two ways.
 */
const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4d7c0f'];

export function seriesColor(i: number): string {
  if (i < PALETTE.length) return PALETTE[i]!;
  const k = i - PALETTE.length;
  const hue = (17 + k * 137.508) % 360;
  return `hsl(${hue.toFixed(1)} 70% ${k % 2 === 0 ? 38 : 52}%)`;
}
