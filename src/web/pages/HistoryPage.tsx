import { useState } from 'react';
import { app, must } from '../api/client';
import type { Ok } from '../api/types';
import { Alert } from '../components/Alert';
import { Badge } from '../components/Badge';
import { LineChart } from '../components/LineChart';
import { useAccounts } from '../hooks/useAccounts';
import { useQuery } from '../hooks/useQuery';
import { money, num, signed, time } from '../lib/format';
import { navigate, usePath } from '../lib/router';

type Stats = Ok<'/v1/accounts/{account_id}/history/stats', 'get'>;
type Trade = Ok<'/v1/accounts/{account_id}/history', 'get'>['trades'][number];

const PERIODS = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
  { days: 365, label: '365 days' },
];
const pct = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);

/** Closed trades and statistics of one account over a period, from its broker's history; CSV download. */
export function HistoryPage() {
  const path = usePath();
  const accounts = useAccounts();
  const chosen = new URLSearchParams(path.split('?')[1] ?? '').get('account') ?? '';
  const account = (accounts.data ?? []).find((a) => a.id === chosen) ?? accounts.data?.[0];
  const [days, setDays] = useState(30);
  const query = () => {
    const to = new Date();
    return { from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString() };
  };
  const data = useQuery(async () => {
    if (!account) return null;
    const q = query();
    const params = { path: { account_id: account.id }, query: q };
    const [stats, list] = await Promise.all([
      must(app.GET('/v1/accounts/{account_id}/history/stats', { params })),
      must(app.GET('/v1/accounts/{account_id}/history', { params: { ...params, query: { ...q, limit: '500' } } })),
    ]);
    return { stats, trades: list.trades, more: list.nextCursor !== null };
  }, [account?.id, days]);
  const [csvError, setCsvError] = useState<unknown>(null);
  const downloadCsv = async () => {
    if (!account) return;
    setCsvError(null);
    try {
      const r = await app.GET('/v1/accounts/{account_id}/history', {
        params: { path: { account_id: account.id }, query: { ...query(), format: 'csv' } },
        parseAs: 'blob',
      });
      if (!r.response.ok) throw new Error(`the export failed (HTTP ${r.response.status})`);
      const url = URL.createObjectURL(r.data as Blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `history-${account.id}.csv`;
      a.click();
      URL.revokeObjectURL(url);
    } catch (err) {
      setCsvError(err);
    }
  };
  const cur = account?.currency ?? null;
  return (
    <>
      <div className="page-head">
        <h1>History</h1>
        <label className="inline">
          Account{' '}
          <select
            value={account?.id ?? ''}
            onChange={(e) => navigate(`/history?account=${encodeURIComponent(e.target.value)}`)}
          >
            {(accounts.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.role})
              </option>
            ))}
          </select>
        </label>
        <fieldset className="segmented" aria-label="Period">
          {PERIODS.map((p) => (
            <label key={p.days} className={days === p.days ? 'on' : ''}>
              <input type="radio" name="history-period" checked={days === p.days} onChange={() => setDays(p.days)} />{' '}
              {p.label}
            </label>
          ))}
        </fieldset>
        <button type="button" className="btn" onClick={() => void downloadCsv()} disabled={!account}>
          Download CSV
        </button>
      </div>
      <Alert error={accounts.error ?? data.error ?? csvError} />
      {data.loading && !data.data ? (
        <p aria-busy="true" className="muted">
          Reading the broker's history…
        </p>
      ) : data.data ? (
        <HistoryBody stats={data.data.stats} trades={data.data.trades} more={data.data.more} currency={cur} />
      ) : (
        <p className="muted">No account yet: connect one first.</p>
      )}
    </>
  );
}

function HistoryBody({
  stats,
  trades,
  more,
  currency,
}: {
  stats: Stats;
  trades: Trade[];
  more: boolean;
  currency: string | null;
}) {
  const s = stats.stats;
  const slave = stats.role === 'slave';
  return (
    <>
      <dl className="facts" data-testid="history-stats">
        <Fact label="Net profit" value={money(s.netProfit, currency)} tone={s.netProfit} />
        <Fact label="Trades" value={`${s.trades} (${s.wins} won, ${s.losses} lost)`} />
        <Fact label="Win rate" value={pct(s.winRate)} />
        <Fact label="Profit factor" value={s.profitFactor === null ? '–' : num(s.profitFactor, 2)} />
        <Fact label="Max drawdown" value={money(s.maxDrawdown, currency)} />
        <Fact label="Swap / commission" value={`${money(s.swap)} / ${money(s.commission)}`} />
        {stats.copy && <Fact label="Copy success" value={pct(stats.copy.successRatio)} />}
        {stats.copy && <Fact label="Mean slippage" value={num(stats.copy.meanSlippage)} />}
        {stats.tracking && (
          <Fact
            label="Copy vs Master (scaled)"
            value={`${money(stats.tracking.copyProfit)} vs ${money(stats.tracking.masterScaledProfit)}`}
            tone={stats.tracking.difference}
          />
        )}
      </dl>
      <section className="card" aria-labelledby="curve-title">
        <h2 id="curve-title">Cumulative realized profit</h2>
        <LineChart
          series={[{ name: 'Realized', points: curvePoints(stats) }]}
          label={`Cumulative net realized profit of ${stats.name}${currency ? ` in ${currency}` : ''}`}
          empty="No trade closed in this period."
        />
      </section>
      <section className="card" aria-labelledby="closed-title">
        <h2 id="closed-title">
          Closed trades{' '}
          <span className="muted small">
            ({trades.length}
            {more ? '+, the newest shown' : ''})
          </span>
        </h2>
        {trades.length === 0 ? (
          <p className="muted">No trade closed in this period.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="history-table">
              <thead>
                <tr>
                  <th>Closed</th>
                  <th>Symbol</th>
                  <th>Side</th>
                  <th className="num">Volume</th>
                  <th className="num">Open</th>
                  <th className="num">Close</th>
                  <th className="num">Profit{currency ? ` (${currency})` : ''}</th>
                  <th className="num">Swap</th>
                  <th className="num">Commission</th>
                  <th>Source</th>
                  {slave && <th className="num">Master, scaled</th>}
                </tr>
              </thead>
              <tbody>
                {trades.map((t) => (
                  <tr key={t.id}>
                    <td>{time(t.closeTime)}</td>
                    <td>{t.symbol}</td>
                    <td>
                      <Badge value={t.side} />
                    </td>
                    <td className="num">{num(t.volume)}</td>
                    <td className="num">{num(t.openPrice)}</td>
                    <td className="num">{num(t.closePrice)}</td>
                    <td className={`num ${(t.profit ?? 0) < 0 ? 'bad' : 'good'}`}>{signed(t.profit, 2)}</td>
                    <td className="num">{signed(t.swap, 2)}</td>
                    <td className="num">{signed(t.commission, 2)}</td>
                    <td title={t.profitSource === 'computed' ? 'computed from prices x volume x contract size' : ''}>
                      {t.profitSource}
                    </td>
                    {slave && <td className="num">{signed(t.master?.scaledProfit, 2)}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** The curve from 0 at the period's start (the drawdown is measured from there too), when a trade closed. */
const curvePoints = (s: Stats) =>
  s.curve.length === 0
    ? []
    : [{ t: Date.parse(s.from), v: 0 }, ...s.curve.map((p) => ({ t: Date.parse(p.time), v: p.cumulative }))];

function Fact({ label, value, tone }: { label: string; value: string; tone?: number }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd className={tone === undefined ? '' : tone < 0 ? 'bad' : tone > 0 ? 'good' : ''}>{value}</dd>
    </div>
  );
}
