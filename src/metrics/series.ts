import type { Registry } from 'prom-client';

/**
 * A Prometheus counter or histogram with two labels, for the copy engine's per-Slave observations. prom-client's
 * own build a label object and a key string for every observation (four per settled copy write: 1000 Slaves made
 * 4000 of each per fan-out); here a series is found through two Map lookups and counted in a Float64Array, and what
 * a scrape reads is built only then. Registered with the prom-client registry like its own metrics, exposed the same
 * way (`_bucket` with cumulative `le`, then `+Inf`, `_sum`, `_count`).
 */
type Labels = Record<string, string>;

abstract class TwoLabelMetric<A extends string, B extends string> {
  private readonly byLabels = new Map<string, Map<string, Float64Array>>();
  /** Each series in the order of its first use: the order prom-client's own expose theirs in. */
  protected series: Array<{ labels: Labels; cells: Float64Array }> = [];
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly [A, B],
    private readonly width: number,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series' cells (allocated on its first use, then the same array). */
  protected cells(a: string, b: string): Float64Array {
    let byB = this.byLabels.get(a);
    if (!byB) this.byLabels.set(a, (byB = new Map()));
    let c = byB.get(b);
    if (!c) {
      byB.set(b, (c = new Float64Array(this.width)));
      this.series.push({ labels: { [this.labelNames[0]]: a, [this.labelNames[1]]: b }, cells: c });
    }
    return c;
  }

  reset(): void {
    this.byLabels.clear();
    this.series = [];
  }
}

export class TwoLabelCounter<A extends string, B extends string> extends TwoLabelMetric<A, B> {
  readonly type = 'counter' as const;

  constructor(name: string, help: string, labelNames: readonly [A, B], registry: Registry) {
    super(name, help, labelNames, 1, registry);
  }

  inc(a: string, b: string, by = 1): void {
    this.cells(a, b)[0]! += by;
  }

  /** What prom-client's registry reads for a scrape and for its JSON. */
  async get() {
    const values = this.series.map((s) => ({ value: s.cells[0]!, labels: { ...s.labels } }));
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }
}

/** Cells: one per bucket (not cumulative), then the count and the sum. */
export class TwoLabelHistogram<A extends string, B extends string> extends TwoLabelMetric<A, B> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly [A, B],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, buckets.length + 2, registry);
  }

  observe(a: string, b: string, value: number): void {
    const c = this.cells(a, b);
    const n = this.buckets.length;
    let i = 0;
    while (i < n && value > this.buckets[i]!) i++;
    if (i < n) c[i]!++;
    c[n]!++;
    c[n + 1]! += value;
  }

  /** What the registry reads for a scrape: `le` as the sample's label, the series' labels as shared ones. */
  async getForPromString() {
    const n = this.buckets.length;
    const bucket = `${this.name}_bucket`;
    const values: Array<{
      labels: Record<string, string | number>;
      sharedLabels: Labels;
      value: number;
      metricName: string;
      exemplar: null | undefined;
    }> = [];
    for (const { labels, cells } of this.series) {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        acc += cells[i]!;
        values.push({
          labels: { le: this.buckets[i]! },
          sharedLabels: labels,
          value: acc,
          metricName: bucket,
          exemplar: null,
        });
      }
      values.push({
        labels: { le: '+Inf' },
        sharedLabels: labels,
        value: cells[n]!,
        metricName: bucket,
        exemplar: null,
      });
      values.push({
        labels: {},
        sharedLabels: labels,
        value: cells[n + 1]!,
        metricName: `${this.name}_sum`,
        exemplar: undefined,
      });
      values.push({
        labels: {},
        sharedLabels: labels,
        value: cells[n]!,
        metricName: `${this.name}_count`,
        exemplar: undefined,
      });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The registry's JSON: each sample's labels with the series' own. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })),
    };
  }
}
