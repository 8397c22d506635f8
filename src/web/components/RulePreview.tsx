import type { RulePreviewAnswer as Preview } from '../api/types';

type Outcome = Preview['copies'][number]['done'];

const what = (o: Outcome) => (o.volume !== null ? String(o.volume) : (o.skipReason ?? o.riskLimit ?? '–'));
const money = (v: number | null) => (v === null ? '–' : v.toFixed(2));
const signed = (v: number) => `${v > 0 ? '+' : ''}${v}`;

/** What a candidate rule would have done to the Slave's recorded copies (docs/what-if.md), beside what was done. */
export function RulePreview({ preview }: { preview: Preview }) {
  const t = preview.totals;
  if (preview.rows === 0)
    return (
      <p className="muted small" data-testid="rule-preview" role="status">
        No recorded copies in the last {preview.days} days: nothing to compare.
      </p>
    );
  return (
    <div data-testid="rule-preview" className="rule-preview">
      <p className="small" role="status">
        Last {preview.days} days: {t.copies} copies, {t.changed} would change. Volume {t.done.volume} →{' '}
        {t.candidate.volume} ({signed(t.volumeDiff)}); profit {money(t.done.profit)} → {money(t.candidate.profit)} (
        {signed(Number(t.profitDiff.toFixed(2)))}); risk-limit hits {t.done.riskLimitHits} → {t.candidate.riskLimitHits}
        .
      </p>
      {preview.copies.length > 0 && (
        <div className="table-wrap">
          <table data-testid="rule-preview-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Symbol</th>
                <th>Action</th>
                <th>Done</th>
                <th>Candidate</th>
                <th>Profit done</th>
                <th>Profit candidate</th>
              </tr>
            </thead>
            <tbody>
              {preview.copies.map((c) => (
                <tr key={c.intentId} data-changed={c.changed}>
                  <td>{new Date(c.at).toLocaleString()}</td>
                  <td>{c.symbol}</td>
                  <td>{c.action}</td>
                  <td data-col="done">{what(c.done)}</td>
                  <td data-col="candidate">{what(c.candidate)}</td>
                  <td>{money(c.done.profit)}</td>
                  <td>{money(c.candidate.profit)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
