import { useId } from 'react';
import { seriesColor } from '../lib/colors';

export interface Series {
  name: string;
  points: Array<{ t: number; v: number }>;
}
const W = 960;
const H = 260;
const PAD = { l: 64, r: 12, t: 12, b: 28 };

const clock = (t: number, span: number) =>
  span > 86_400_000
    ? new Date(t).toLocaleString('en-GB', { day: '2-digit', month: 'short', hour: '2-digit', minute: '2-digit' })
    : new Date(t).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** Lines over time in plain SVG; the label says in words what the chart shows, for screen readers. */
export function LineChart({
  series,
  label,
  unit = '',
  empty = 'No samples yet.',
  domain,
  dots = false,
}: {
  series: Series[];
  label: string;
  unit?: string;
  empty?: string;
  /** The time axis' span when it is known (a month), not only the samples' (a single day would fill the width). */
  domain?: [number, number];
  /** A mark on each sample: for a few separate samples (one per day), where a line alone reads as continuous. */
  dots?: boolean;
}) {
  const titleId = useId();
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return <p className="muted">{empty}</p>;
  let t0 = Math.min(...all.map((p) => p.t), domain?.[0] ?? Infinity);
  let t1 = Math.max(...all.map((p) => p.t), domain?.[1] ?? -Infinity);
  if (t1 === t0) {
    t0 -= 30_000;
    t1 += 30_000;
  }
  let v0 = Math.min(...all.map((p) => p.v));
  let v1 = Math.max(...all.map((p) => p.v));
  const span = v1 - v0 || Math.max(1, Math.abs(v1) * 0.001);
  v0 -= span * 0.1;
  v1 += span * 0.1;
  const x = (t: number) => PAD.l + ((t - t0) / (t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (v: number) => PAD.t + (1 - (v - v0) / (v1 - v0)) * (H - PAD.t - PAD.b);
  const ticks = [v0 + (v1 - v0) * 0.1, (v0 + v1) / 2, v1 - (v1 - v0) * 0.1];
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={titleId}>
        <title id={titleId}>{label}</title>
        {ticks.map((v) => (
          <g key={v}>
            <line x1={PAD.l} x2={W - PAD.r} y1={y(v)} y2={y(v)} className="grid" />
            <text x={PAD.l - 6} y={y(v) + 4} textAnchor="end" className="axis">
              {v.toLocaleString('en-US', { maximumFractionDigits: 2 })}
            </text>
          </g>
        ))}
        <text x={PAD.l} y={H - 8} className="axis">
          {clock(t0, t1 - t0)}
        </text>
        <text x={W - PAD.r} y={H - 8} textAnchor="end" className="axis">
          {clock(t1, t1 - t0)}
        </text>
        {series.map((s, i) => (
          <g key={s.name}>
            <polyline
              fill="none"
              stroke={seriesColor(i)}
              strokeWidth={2}
              vectorEffect="non-scaling-stroke"
              points={(s.points.length === 1 && !dots ? [s.points[0]!, { ...s.points[0]!, t: t1 }] : s.points)
                .map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`)
                .join(' ')}
            />
            {dots && s.points.map((p) => <circle key={p.t} cx={x(p.t)} cy={y(p.v)} r={5} fill={seriesColor(i)} />)}
          </g>
        ))}
      </svg>
      <figcaption className="legend">
        {series.map((s, i) => {
          const last = s.points[s.points.length - 1];
          return (
            <span key={s.name}>
              <i style={{ background: seriesColor(i) }} aria-hidden="true" />
              {s.name}
              {last ? `: ${last.v.toLocaleString('en-US', { maximumFractionDigits: 2 })}${unit}` : ''}
            </span>
          );
        })}
      </figcaption>
    </figure>
  );
}
