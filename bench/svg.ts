// A small SVG writer for the benchmarks' charts: line charts and grouped bar charts, no dependency. Text is
// escaped; sizes are fixed so the files diff cleanly and render the same in a browser and on GitHub.

export interface Series {
  name: string;
  points: Array<[number, number]>;
  /** Dashed: a floor or a goal beside a measurement. */
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Log scale on x (counts of Slaves: 10, 100, 1000). */
  logX?: boolean;
}

export interface BarChart {
  title: string;
  yLabel: string;
  groups: Array<{ label: string; bars: Array<{ name: string; value: number }> }>;
}

const W = 720;
const H = 400;
const M = { top: 40, right: 20, bottom: 80, left: 70 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (v: number) => Number(v.toFixed(1)).toString();

/** Round tick values covering [lo, hi]: 1, 2 or 5 times a power of ten apart. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  const out: number[] = [];
  // Up to the first tick at or above `hi`, so the axis covers every value.
  for (let v = Math.floor(lo / step) * step; ; v += step) {
    out.push(Number(v.toPrecision(12)));
    if (v >= hi - step * 1e-9) return out;
  }
}

const label = (v: number) => (Math.abs(v) >= 10_000 ? `${v / 1000}k` : String(v));

function frame(title: string, yLabel: string, xLabel: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="16" y="${(M.top + H - M.bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(M.top + H - M.bottom) / 2})">${esc(yLabel)}</text>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - M.bottom + 36}" text-anchor="middle">${esc(xLabel)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function yAxis(yTicks: number[], y: (v: number) => number): string[] {
  return yTicks.flatMap((t) => [
    `<line x1="${M.left}" x2="${W - M.right}" y1="${num(y(t))}" y2="${num(y(t))}" stroke="#e5e5e5"/>`,
    `<text x="${M.left - 6}" y="${num(y(t) + 4)}" text-anchor="end">${label(t)}</text>`,
  ]);
}

function legend(items: Array<{ name: string; colour: string; dashed?: boolean }>): string[] {
  return items.flatMap((s, i) => {
    const x = M.left + (i % 3) * 215;
    const y = H - M.bottom + 54 + Math.floor(i / 3) * 16;
    return [
      `<line x1="${x}" x2="${x + 22}" y1="${y - 4}" y2="${y - 4}" stroke="${s.colour}" stroke-width="3"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${x + 28}" y="${y}">${esc(s.name)}</text>`,
    ];
  });
}

export function lineChart(c: LineChart): string {
  const pts = c.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const fx = c.logX ? (v: number) => Math.log10(Math.max(v, 1e-9)) : (v: number) => v;
  const xs = pts.map(([x]) => fx(x));
  const yMax = Math.max(1e-9, ...pts.map(([, y]) => y));
  const yTicks = ticks(0, yMax);
  const yTop = yTicks.at(-1)!;
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (!(x1 > x0)) [x0, x1] = [x0 - 1, x0 + 1];
  const x = (v: number) => M.left + ((fx(v) - x0) / (x1 - x0)) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - (v / yTop) * (H - M.top - M.bottom);
  const xTicks = c.logX
    ? ticks(x0, x1, 4)
        .filter(Number.isInteger)
        .map((e) => 10 ** e)
    : ticks(x0, x1, 6);
  const body = [
    ...yAxis(yTicks, y),
    ...xTicks.map((t) => `<text x="${num(x(t))}" y="${H - M.bottom + 16}" text-anchor="middle">${label(t)}</text>`),
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>`,
    ...c.series.flatMap((s, i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      const ok = s.points.filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b));
      const d = ok.map(([a, b], j) => `${j === 0 ? 'M' : 'L'}${num(x(a))},${num(y(b))}`).join(' ');
      return [
        `<path d="${d}" fill="none" stroke="${colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
        ...ok.map(([a, b]) => `<circle cx="${num(x(a))}" cy="${num(y(b))}" r="3" fill="${colour}"/>`),
      ];
    }),
    ...legend(c.series.map((s, i) => ({ name: s.name, colour: COLOURS[i % COLOURS.length]!, dashed: s.dashed }))),
  ];
  return frame(c.title, c.yLabel, c.xLabel, body);
}

export function barChart(c: BarChart): string {
  const names = [...new Set(c.groups.flatMap((g) => g.bars.map((b) => b.name)))];
  const yTicks = ticks(0, Math.max(1e-9, ...c.groups.flatMap((g) => g.bars.map((b) => b.value))));
  const yTop = yTicks.at(-1)!;
  const y = (v: number) => H - M.bottom - (v / yTop) * (H - M.top - M.bottom);
  const gw = (W - M.left - M.right) / Math.max(1, c.groups.length);
  const bw = (gw * 0.8) / Math.max(1, names.length);
  const body = [
    ...yAxis(yTicks, y),
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>`,
    ...c.groups.flatMap((g, gi) => [
      `<text x="${num(M.left + gi * gw + gw / 2)}" y="${H - M.bottom + 16}" text-anchor="middle">${esc(g.label)}</text>`,
      ...g.bars.flatMap((b) => {
        const bi = names.indexOf(b.name);
        const bx = M.left + gi * gw + gw * 0.1 + bi * bw;
        return [
          `<rect x="${num(bx)}" y="${num(y(b.value))}" width="${num(bw - 2)}" height="${num(H - M.bottom - y(b.value))}" fill="${COLOURS[bi % COLOURS.length]}"/>`,
          `<text x="${num(bx + bw / 2 - 1)}" y="${num(y(b.value) - 4)}" text-anchor="middle" font-size="11">${label(b.value >= 100 ? Math.round(b.value) : Number(b.value.toFixed(1)))}</text>`,
        ];
      }),
    ]),
    ...legend(names.map((name, i) => ({ name, colour: COLOURS[i % COLOURS.length]! }))),
  ];
  return frame(c.title, c.yLabel, '', body);
}
