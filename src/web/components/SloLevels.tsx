import type { GroupSlo } from '../api/slo';
import { judge, type Target, VERDICT_TEXT, type Verdict } from '../lib/slo';
import { ms, num, time } from '../lib/format';

type Slave = GroupSlo['slaves'][number];
type Breach = GroupSlo['breaches'][number];

/** One level and its mark in words ("met", "breached"); the badge colour only repeats the word. */
function Cell({ label, value, verdict }: { label: string; value: string; verdict: Verdict }) {
  return (
    <td className="num" data-label={label}>
      {value}{' '}
      {verdict === 'met' || verdict === 'breached' ? (
        <span className={`badge badge-${verdict === 'met' ? 'good' : 'bad'}`} data-verdict={verdict}>
          {VERDICT_TEXT[verdict]}
        </span>
      ) : (
        <span className="muted small">{VERDICT_TEXT[verdict]}</span>
      )}
    </td>
  );
}

const bound = (v: number | string | null, unit: string) => (v === null ? 'none' : `${v}${unit}`);

/** One Slave's levels, each marked against the target; its button opens the month's history. */
function SlaveRow({
  s,
  target,
  chosen,
  onChoose,
}: {
  s: Slave;
  target: Target | null;
  chosen: string | null;
  onChoose: (accountId: string) => void;
}) {
  const v = judge(s.levels, target);
  const l = s.levels;
  return (
    <tr data-testid="slo-row">
      <td data-label="Slave">
        {s.name}
        <div className="muted small">
          {l.success.attempted} attempted cop{l.success.attempted === 1 ? 'y' : 'ies'}
        </div>
      </td>
      <Cell label="Latency p50" value={ms(l.latency.p50Ms)} verdict={v.latency_p50} />
      <Cell label="Latency p99" value={ms(l.latency.p99Ms)} verdict={v.latency_p99} />
      <Cell
        label="Success"
        value={l.success.percent === null ? '–' : `${num(l.success.percent, 2)} %`}
        verdict={v.success}
      />
      <Cell
        label="Mean slippage"
        value={l.slippage.meanPoints === null ? '–' : `${num(l.slippage.meanPoints, 2)} pt`}
        verdict={v.slippage}
      />
      <Cell label="Drift grade" value={l.drift.grade} verdict={v.drift} />
      <td data-label="History">
        <button
          type="button"
          className="btn btn-small"
          aria-pressed={chosen === s.accountId}
          onClick={() => onChoose(s.accountId)}
        >
          Month history<span className="sr-only"> of {s.name}</span>
        </button>
      </td>
    </tr>
  );
}

/** Each Slave's levels over the target's window against the target, and the breaches in progress. */
export function SloLevels({
  view,
  target,
  names,
  chosen,
  onChoose,
}: {
  view: GroupSlo;
  target: Target | null;
  names: Map<string, string>;
  chosen: string | null;
  onChoose: (accountId: string) => void;
}) {
  return (
    <>
      {view.slaves.length === 0 ? (
        <p className="muted">No Slaves in this group yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack-narrow" data-testid="slo-table">
            <caption className="sr-only">Each Slave's service levels against the target</caption>
            <thead>
              <tr>
                <th scope="col">Slave</th>
                <th scope="col" className="num">
                  Latency p50 <span className="muted">≤ {bound(target?.latencyP50Ms ?? null, ' ms')}</span>
                </th>
                <th scope="col" className="num">
                  Latency p99 <span className="muted">≤ {bound(target?.latencyP99Ms ?? null, ' ms')}</span>
                </th>
                <th scope="col" className="num">
                  Success <span className="muted">≥ {bound(target?.successPercent ?? null, ' %')}</span>
                </th>
                <th scope="col" className="num">
                  Slippage <span className="muted">≤ {bound(target?.maxSlippagePoints ?? null, ' pt')}</span>
                </th>
                <th scope="col" className="num">
                  Drift <span className="muted">≤ {bound(target?.maxDriftGrade ?? null, '')}</span>
                </th>
                <th scope="col">
                  <span className="sr-only">History</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {view.slaves.map((s) => (
                <SlaveRow key={s.accountId} s={s} target={target} chosen={chosen} onChoose={onChoose} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Open breaches</h3>
      {view.breaches.length === 0 ? (
        <p className="muted" data-testid="slo-breaches">
          None in progress.
        </p>
      ) : (
        <ul data-testid="slo-breaches">
          {view.breaches.map((b: Breach) => (
            <li key={`${b.accountId}:${b.metric}`}>
              <span className="badge badge-bad">breached</span> <strong>{names.get(b.accountId) ?? b.accountId}</strong>
              : {b.detail} <span className="muted small">since {time(b.since)}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
