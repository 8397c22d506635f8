// Draws the benchmarks' latest results (bench/results/<name>-<time>.json) as SVG beside them, and copies them to
// docs/performance/ for docs/performance.md. A chart whose results are missing is left out, not drawn empty.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../src/config/package-root.js';
import { barChart, lineChart, type Series } from './svg.js';

type Json = { rows?: Array<Record<string, unknown>> } & Record<string, unknown>;

function latest(dir: string, name: string): Json | null {
  const re = new RegExp(`^${name}-\\d{4}-.*\\.json$`);
  const file = readdirSync(dir)
    .filter((f) => re.test(f))
    .sort()
    .at(-1);
  return file ? (JSON.parse(readFileSync(join(dir, file), 'utf8')) as Json) : null;
}

const n = (v: unknown) => (typeof v === 'number' ? v : Number.parseFloat(String(v)));
const text = (v: unknown) => String(v ?? '');

/** Copy overhead against the number of Slaves, beside the floor (read from the copy-overhead bench's rows). */
function copyOverhead(j: Json): string | null {
  // Each measure is prefixed with its store, e.g. "[pglite] copy overhead: ..." (older results have no prefix).
  const rows = (j.rows ?? [])
    .filter((r) => Number.isFinite(n(r.slaves)))
    .map((r) => {
      const m = /^\s*(?:\[([^\]]+)\]\s*)?(.*)$/s.exec(text(r.measure))!;
      return { row: r, kind: m[1] ?? '', measure: m[2]!.trim().toLowerCase() };
    });
  const kinds = [...new Set(rows.map((r) => r.kind))];
  const pick = (
    kind: string,
    prefix: string,
    field: string,
    also: (measure: string) => boolean = () => true,
  ): Array<[number, number]> =>
    rows
      .filter((r) => r.kind === kind && r.measure.startsWith(prefix) && also(r.measure))
      .map((r): [number, number] => [n(r.row.slaves), n(r.row[field])])
      .filter(([, v]) => Number.isFinite(v))
      .sort((a, b) => a[0] - b[0]);
  const label = (kind: string, what: string) => (kind ? `${kind}: ${what}` : what);
  const series: Series[] = [
    // The p99 of each store (the target); the p50 too when there is one store (the legend has 6 places).
    ...kinds.flatMap((k) => [
      ...(kinds.length === 1
        ? [{ name: label(k, 'copy overhead p50'), points: pick(k, 'copy overhead:', 'p50_ms') }]
        : []),
      { name: label(k, 'copy overhead p99'), points: pick(k, 'copy overhead:', 'p99_ms') },
    ]),
    // Each store's floor: the same rows in one statement and one commit into a table with only its primary key.
    ...kinds.map((k) => ({
      name: label(k, 'write floor p99 (rows, PK only)'),
      points: pick(k, '', 'p99_ms', (m) => m.includes('floor') && m.includes('pk-only') && !m.startsWith('copy')),
      dashed: true,
    })),
    // The in-memory planning floor is the same work whatever the store: drawn once, from the first store.
    { name: 'floor p50 (same planning, in memory)', points: pick(kinds[0] ?? '', 'floor:', 'p50_ms'), dashed: true },
  ].filter((s) => s.points.length > 0);
  if (series.length === 0) return null;
  return lineChart({
    title: 'Copy overhead: action received -> last order handed to the adapter',
    xLabel: 'Slaves behind one Master (log scale)',
    yLabel: 'ms',
    series,
    logX: true,
  });
}

interface Minute {
  minute: number;
  openP50Ms: number;
  openP99Ms: number;
  closeP50Ms: number;
  rssMb: number;
  loopP99Ms: number;
  serviceCpuPct: number;
  simulatorCpuShare: number;
}

function soakLatency(j: Json): string | null {
  const m = (j.perMinute ?? []) as Minute[];
  if (m.length === 0) return null;
  const s = (name: string, f: (x: Minute) => number, dashed = false): Series => ({
    name,
    points: m.map((x) => [x.minute, f(x)]),
    dashed,
  });
  return lineChart({
    title: `Soak: 100 Slaves, an action every 2 s, ${m.length} minutes (Master fill -> Slave fill)`,
    xLabel: 'minute',
    yLabel: 'ms',
    series: [
      s('open p50', (x) => x.openP50Ms),
      s('open p99', (x) => x.openP99Ms),
      s('close p50', (x) => x.closeP50Ms, true),
    ],
  });
}

function soakResources(j: Json): string | null {
  const m = (j.perMinute ?? []) as Minute[];
  if (m.length === 0) return null;
  return lineChart({
    title: 'Soak: the service over time',
    xLabel: 'minute',
    yLabel: 'MB / ms / %',
    series: [
      { name: 'service RSS (MB)', points: m.map((x) => [x.minute, x.rssMb]) },
      { name: 'event-loop delay p99 (ms)', points: m.map((x) => [x.minute, x.loopP99Ms]) },
      { name: 'service CPU (% of a core)', points: m.map((x) => [x.minute, x.serviceCpuPct]), dashed: true },
      { name: 'simulator share of CPU (%)', points: m.map((x) => [x.minute, x.simulatorCpuShare]), dashed: true },
    ],
  });
}

function apiVsBare(j: Json): string | null {
  const rows = j.rows ?? [];
  const svc = rows.find((r) => text(r.measure).startsWith('GET /v1/accounts'));
  const bare = rows.find((r) => text(r.measure).startsWith('bare Fastify'));
  if (!svc || !bare) return null;
  return barChart({
    title: 'GET /v1/accounts (100 accounts) beside bare Fastify sending the same bytes',
    yLabel: 'requests per second',
    groups: [
      {
        label: String(j.at ?? '').slice(0, 16),
        bars: [
          { name: 'the service', value: n(svc.value) },
          { name: 'bare Fastify, same bytes', value: n(bare.value) },
        ],
      },
    ],
  });
}

function e2e(j: Json): string | null {
  const s = j.service as { p50: number; p99: number } | undefined;
  const f = j.floor as { p50: number; p99: number } | undefined;
  if (!s || !f) return null;
  return barChart({
    title: 'Master fill -> 10 Slave fills (B and C): the service beside the same adapters driven directly',
    yLabel: 'ms',
    groups: [
      {
        label: 'p50',
        bars: [
          { name: 'through the service', value: s.p50 },
          { name: 'adapters directly', value: f.p50 },
        ],
      },
      {
        label: 'p99',
        bars: [
          { name: 'through the service', value: s.p99 },
          { name: 'adapters directly', value: f.p99 },
        ],
      },
    ],
  });
}

function pacing(runs: Array<Json | null>): string | null {
  const groups = runs
    .filter((j): j is Json => j !== null && Number.isFinite(n(j.totalS)))
    .map((j) => ({
      label: `${j.n} orders`,
      bars: [
        { name: 'completion, pacing by answers (s)', value: n(j.totalS) },
        ...(Number.isFinite(n(j.baselineS))
          ? [{ name: 'before: 1.2 s window on sends (s)', value: n(j.baselineS) }]
          : []),
        { name: 'ideal N / 50 per s (s)', value: n(j.idealS) },
      ],
    }));
  if (groups.length === 0) return null;
  return barChart({ title: 'cTrader Slaves behind one 50 req/s connection', yLabel: 's', groups });
}

/**
 * Draws the charts of the benches that ran (`ran`), from their latest results; returns the files written under
 * docs/performance/. A chart of a bench that did not run is left as it is: `npm run bench record-cost` must not
 * redraw the soak's charts, which docs/performance.md describes as those of one documented run.
 */
export function drawCharts(ran: ReadonlySet<string>): string[] {
  const root = packageRoot();
  const dir = join(root, 'bench', 'results');
  if (!existsSync(dir)) return [];
  const docs = join(root, 'docs', 'performance');
  mkdirSync(docs, { recursive: true });
  const from = (...benches: string[]) => benches.some((b) => ran.has(b));
  const soak = from('soak') ? latest(dir, 'soak') : null;
  const charts: Array<[string, string | null]> = [
    [
      'copy-overhead.svg',
      ((j) => (j ? copyOverhead(j) : null))(from('copy-overhead') ? latest(dir, 'copy-overhead') : null),
    ],
    ['soak-latency.svg', soak ? soakLatency(soak) : null],
    ['soak-resources.svg', soak ? soakResources(soak) : null],
    ['api-vs-bare.svg', ((j) => (j ? apiVsBare(j) : null))(from('service') ? latest(dir, 'service') : null)],
    ['e2e.svg', ((j) => (j ? e2e(j) : null))(from('e2e') ? latest(dir, 'e2e') : null)],
    [
      'pacing.svg',
      from('cross-platform-500c', 'cross-platform-1000c')
        ? pacing([latest(dir, 'cross-platform-500c'), latest(dir, 'cross-platform-1000c')])
        : null,
    ],
  ];
  const written: string[] = [];
  for (const [file, svg] of charts) {
    if (!svg) continue;
    writeFileSync(join(dir, file), svg);
    copyFileSync(join(dir, file), join(docs, file));
    written.push(join('docs', 'performance', file));
  }
  console.log(`charts: ${written.join(', ') || 'none (no chart for the benches run)'}`);
  return written;
}
