import { useId } from 'react';

export interface Bar {
  key: string;
  label: string;
  value: number;
  hint?: string;
}
const W = 960;
const H = 200;
const PAD = { l: 56, r: 8, t: 10, b: 24 };

/** Vertical bars in plain SVG, each with a tooltip; the label says what the chart is for screen readers. */
export function BarChart({ bars, label, format }: { bars: Bar[]; label: string; format: (v: number) => string }) {
  const titleId = useId();
  if (bars.length === 0) return <p className="muted">Nothing to show yet.</p>;
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const step = (W - PAD.l - PAD.r) / bars.length;
  const bw = Math.max(2, Math.min(28, step * 0.7));
  const y = (v: number) => PAD.t + (1 - v / max) * (H - PAD.t - PAD.b);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={titleId}>
        <title id={titleId}>{label}</title>
        {[max / 2, max].map((v) => (
          <g key={v}>
            <line x1={PAD.l} x2={W - PAD.r} y1={y(v)} y2={y(v)} className="grid" />
            <text x={PAD.l - 6} y={y(v) + 4} textAnchor="end" className="axis">
              {format(v)}
            </text>
          </g>
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={y(0)} y2={y(0)} className="grid" />
        {bars.map((b, i) => (
          <rect
            key={b.key}
            x={PAD.l + i * step + (step - bw) / 2}
            y={y(b.value)}
            width={bw}
            height={Math.max(1, y(0) - y(b.value))}
            className="bar"
          >
            <title>{`${b.label}: ${format(b.value)}${b.hint ? ` (${b.hint})` : ''}`}</title>
          </rect>
        ))}
        <text x={PAD.l} y={H - 6} className="axis">
          {bars[0]!.label}
        </text>
        <text x={W - PAD.r} y={H - 6} textAnchor="end" className="axis">
          {bars[bars.length - 1]!.label}
        </text>
      </svg>
    </figure>
  );
}
