import { useState } from 'react';
import { getSloReport, type SloReport } from '../api/slo';
import { useQuery } from '../hooks/useQuery';
import { Alert } from './Alert';
import { LineChart } from './LineChart';

const thisMonth = () => new Date().toISOString().slice(0, 7);
type Day = SloReport['days'][number];

/** The points of one level per UTC day (a day without a sample leaves a gap in the line). */
const points = (days: Day[], pick: (d: Day) => number | null) =>
  days.flatMap((d) => {
    const v = pick(d);
    return v === null ? [] : [{ t: Date.parse(`${d.day}T12:00:00Z`), v }];
  });

/** A Slave's month: its levels per UTC day as charts (slo-report `days`), and the month against the target. */
export function SloHistory({ accountId, name }: { accountId: string; name: string }) {
  const [month, setMonth] = useState(thisMonth);
  const report = useQuery(() => getSloReport(accountId, month), [accountId, month]);
  const r = report.data;
  const days = r?.days ?? [];
  // The whole calendar month on the time axis (UTC), each day's levels at its noon.
  const [y, m] = month.split('-').map(Number) as [number, number];
  const domain: [number, number] = [Date.UTC(y, m - 1, 1), Date.UTC(y, m, 1) - 1];
  return (
    <section className="card" aria-labelledby="slo-history-title" data-testid="slo-history">
      <div className="page-head">
        <h2 id="slo-history-title">{name}: the month day by day</h2>
        <label className="inline">
          Month{' '}
          <input
            type="month"
            value={month}
            max={thisMonth()}
            onChange={(e) => e.target.value && setMonth(e.target.value)}
          />
        </label>
      </div>
      <Alert error={report.error} />
      {report.loading && !r ? (
        <p aria-busy="true" className="muted">
          Reading the copy ledger…
        </p>
      ) : r ? (
        <>
          <p data-testid="slo-month">
            {r.met === null
              ? 'No target set: the month is not judged.'
              : r.met
                ? `The month as a whole meets the target (${days.length} day${days.length === 1 ? '' : 's'} with copies).`
                : `The month as a whole misses the target: ${r.missed.join(', ')}.`}
          </p>
          <h3>Latency per day</h3>
          <LineChart
            series={[
              { name: 'p99', points: points(days, (d) => d.levels.latency.p99Ms) },
              { name: 'p50', points: points(days, (d) => d.levels.latency.p50Ms) },
            ]}
            unit=" ms"
            domain={domain}
            dots
            label={`Copy latency per day of ${name} in ${month}, p99 and p50 in milliseconds${r.target?.latencyP99Ms ? `, target p99 at most ${r.target.latencyP99Ms} ms` : ''}`}
            empty="No copy answered this month."
          />
          <h3>Success per day</h3>
          <LineChart
            series={[{ name: 'success', points: points(days, (d) => d.levels.success.percent) }]}
            unit=" %"
            domain={domain}
            dots
            label={`Copy success per day of ${name} in ${month}, in percent${r.target?.successPercent !== null && r.target ? `, target at least ${r.target.successPercent} %` : ''}`}
            empty="No copy attempted this month."
          />
        </>
      ) : null}
    </section>
  );
}
