import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TwoLabelCounter, TwoLabelHistogram } from './series.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];

/** The same observations into prom-client's own metric and ours, each in a registry of its own. */
function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const h = {
    theirs: new Histogram({
      name: 'h_seconds',
      help: 'a histogram',
      labelNames: ['hop', 'platform'],
      buckets: BUCKETS,
      registers: [theirs],
    }),
    ours: new TwoLabelHistogram('h_seconds', 'a histogram', ['hop', 'platform'], BUCKETS, ours),
  };
  const c = {
    theirs: new Counter({
      name: 'c_total',
      help: 'a counter',
      labelNames: ['outcome', 'platform'],
      registers: [theirs],
    }),
    ours: new TwoLabelCounter('c_total', 'a counter', ['outcome', 'platform'], ours),
  };
  return { theirs, ours, h, c };
}

describe('two-label metrics', () => {
  it("expose what prom-client's own expose for the same observations (text and JSON)", async () => {
    const { theirs, ours, h, c } = both();
    // On a bound, under the first, over the last, zero, fractions; series first seen in any order.
    const seen: Array<[string, string, number]> = [
      ['ack', 'tradelocker', 0.01],
      ['plan', 'ctrader', 0],
      ['ack', 'tradelocker', 5],
      ['send', 'ctrader', 0.0005],
      ['ack', 'ctrader', 0.25],
      ['ack', 'tradelocker', 0.1],
      ['plan', 'ctrader', 1],
      ['ack', 'tradelocker', 0.03333],
    ];
    for (const [a, b, v] of seen) {
      h.theirs.observe({ hop: a, platform: b }, v);
      h.ours.observe(a, b, v);
      c.theirs.inc({ outcome: a, platform: b });
      c.ours.inc(a, b);
    }
    c.theirs.inc({ outcome: 'ack', platform: 'x' }, 3);
    c.ours.inc('ack', 'x', 3);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    ours.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never);
    theirs.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('counts each observation once, in the first bucket whose bound it does not exceed', async () => {
    const reg = new Registry();
    const h = new TwoLabelHistogram('x_seconds', 'x', ['hop', 'platform'], BUCKETS, reg);
    for (const v of [0.001, 0.0011, 2]) h.observe('ack', 'sim', v);
    const [m] = (await reg.getMetricsAsJSON()) as unknown as Array<{
      values: Array<{ metricName?: string; labels: Record<string, unknown>; value: number }>;
    }>;
    const at = (le: number | string) =>
      m!.values.find((v) => v.metricName === 'x_seconds_bucket' && v.labels.le === le)?.value;
    expect([at(0.001), at(0.01), at(1), at('+Inf')]).toEqual([1, 2, 2, 3]);
    expect(m!.values.find((v) => v.metricName === 'x_seconds_sum')?.value).toBeCloseTo(2.0021, 10);
  });
});
