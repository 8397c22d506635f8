import { useState } from 'react';
import { equityHistory, type EquityRange } from '../api/actions';
import type { Account } from '../api/types';
import { useQuery } from '../hooks/useQuery';
import { Alert } from './Alert';
import { LineChart } from './LineChart';

const RANGES: Array<{ value: EquityRange; label: string }> = [
  { value: '1h', label: '1 hour' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
];

/** Equity per account over the chosen range, from the snapshots the service keeps (one a minute per account). */
export function EquityChart({ accounts }: { accounts: Account[] }) {
  const [range, setRange] = useState<EquityRange>('24h');
  const ids = accounts.map((a) => a.id).join(',');
  const history = useQuery(
    async () => Promise.all(accounts.map(async (a) => ({ a, h: await equityHistory(a.id, range) }))),
    [ids, range],
  );
  const series = (history.data ?? [])
    .map(({ a, h }) => ({ name: a.name, points: h.points.map((p) => ({ t: Date.parse(p.t), v: p.equity })) }))
    .filter((s) => s.points.length > 0);
  return (
    <div data-testid="equity-chart">
      <fieldset className="segmented" aria-label="Range of the equity chart">
        {RANGES.map((r) => (
          <label key={r.value} className={range === r.value ? 'on' : ''}>
            <input
              type="radio"
              name={`equity-range-${ids}`}
              value={r.value}
              checked={range === r.value}
              onChange={() => setRange(r.value)}
            />{' '}
            {r.label}
          </label>
        ))}
      </fieldset>
      <Alert error={history.error} />
      {history.loading && !history.data ? (
        <p aria-busy="true" className="muted">
          Loading equity…
        </p>
      ) : (
        <LineChart
          series={series}
          label={`Equity over time (last ${RANGES.find((r) => r.value === range)!.label}) of ${accounts.length === 1 ? accounts[0]!.name : `${accounts.length} accounts`}`}
          empty="No equity snapshots in this range yet: the service records one a minute per account while it runs."
        />
      )}
    </div>
  );
}
