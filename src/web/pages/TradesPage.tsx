import { Fragment, useMemo, useState } from 'react';
import { app, must } from '../api/client';
import type { Trade } from '../api/types';
import { Alert } from '../components/Alert';
import { Badge } from '../components/Badge';
import { LatencyChart } from '../components/LatencyChart';
import { SendOrderForm } from '../components/SendOrderForm';
import { TradeCopies } from '../components/TradeCopies';
import { useAccounts } from '../hooks/useAccounts';
import { useQuery } from '../hooks/useQuery';
import { num, time } from '../lib/format';

type OutcomeFilter = 'all' | 'problems' | 'skipped' | 'pending';
const PROBLEM = new Set(['rejected', 'denied', 'unresolved']);
const PENDING = new Set(['planned', 'sent']);

/** Trades and the copy ledger, newest first, live; filters; a send-order form; copy latency per trade. */
export function TradesPage() {
  const accounts = useAccounts();
  const [master, setMaster] = useState('');
  const [symbol, setSymbol] = useState('');
  const [outcome, setOutcome] = useState<OutcomeFilter>('all');
  const [limit, setLimit] = useState(50);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const trades = useQuery(
    async () =>
      (
        await must(
          app.GET('/v1/trades', {
            params: { query: { limit: String(limit), ...(master ? { accountId: master } : {}) } },
          }),
        )
      ).trades,
    [master, limit],
    { live: true },
  );
  const masters = (accounts.data ?? []).filter((a) => a.role === 'master');

  const shown = useMemo(
    () =>
      (trades.data ?? []).filter((t: Trade) => {
        if (symbol && !t.symbol.toLowerCase().includes(symbol.trim().toLowerCase())) return false;
        if (outcome === 'problems') return t.status !== 'accepted' || t.copies.some((c) => PROBLEM.has(c.outcome));
        if (outcome === 'skipped') return t.copies.some((c) => c.outcome === 'skipped');
        if (outcome === 'pending') return t.copies.some((c) => PENDING.has(c.outcome));
        return true;
      }),
    [trades.data, symbol, outcome],
  );

  const toggle = (id: string) =>
    setOpen((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const counts = (t: Trade) => {
    const by = new Map<string, number>();
    for (const c of t.copies) by.set(c.outcome, (by.get(c.outcome) ?? 0) + 1);
    return [...by.entries()];
  };

  return (
    <section aria-labelledby="trades-title">
      <h1 id="trades-title">Trades and copy ledger</h1>
      <section className="card" aria-labelledby="send-title">
        <h2 id="send-title">Send an order to a Master</h2>
        {accounts.data && (
          <SendOrderForm
            masters={masters}
            onSent={(r) => {
              setOpen((s) => new Set(s).add(r.tradeId));
              void trades.reload();
            }}
          />
        )}
      </section>

      <section className="card" aria-labelledby="lat-title">
        <h2 id="lat-title">Copy latency per trade</h2>
        <LatencyChart trades={shown} />
      </section>

      <form className="filters" role="search" aria-label="Filter trades" onSubmit={(e) => e.preventDefault()}>
        <label>
          Master
          <select value={master} onChange={(e) => setMaster(e.target.value)}>
            <option value="">all</option>
            {masters.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Symbol
          <input value={symbol} onChange={(e) => setSymbol(e.target.value)} placeholder="any" />
        </label>
        <label>
          Copies
          <select value={outcome} onChange={(e) => setOutcome(e.target.value as OutcomeFilter)}>
            <option value="all">all</option>
            <option value="problems">with problems (rejected, denied, unresolved)</option>
            <option value="skipped">with skipped Slaves</option>
            <option value="pending">still in flight</option>
          </select>
        </label>
        <label>
          Show
          <select value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
            {[20, 50, 100, 200].map((n) => (
              <option key={n} value={n}>
                {n} newest
              </option>
            ))}
          </select>
        </label>
      </form>

      <Alert error={trades.error} />
      {trades.loading && !trades.data ? (
        <p aria-busy="true">Loading trades…</p>
      ) : shown.length === 0 ? (
        <p className="muted">No trades match.</p>
      ) : (
        <div className="table-wrap">
          <table data-testid="trades-table">
            <caption className="sr-only">Trades, newest first</caption>
            <thead>
              <tr>
                <th>
                  <span className="sr-only">Expand</span>
                </th>
                <th>Time</th>
                <th>Master</th>
                <th>Trade</th>
                <th className="num">Fill</th>
                <th>Status</th>
                <th>Copies</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <Fragment key={t.tradeId}>
                  <tr data-trade={t.tradeId}>
                    <td>
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-expanded={open.has(t.tradeId)}
                        aria-controls={`copies-${t.tradeId}`}
                        onClick={() => toggle(t.tradeId)}
                        aria-label={`${open.has(t.tradeId) ? 'Hide' : 'Show'} copies of ${t.tradeId}`}
                      >
                        {open.has(t.tradeId) ? '▾' : '▸'}
                      </button>
                    </td>
                    <td>{time(t.createdAt)}</td>
                    <td>
                      {accounts.data?.find((a) => a.id === t.masterAccountId)?.name ?? (
                        <span className="muted" title={t.masterAccountId}>
                          {t.masterAccountName ? `${t.masterAccountName} (removed)` : 'a removed account'}
                        </span>
                      )}
                    </td>
                    <td>
                      {t.action} {t.side} {num(t.volume)} {t.symbol}
                      {t.type !== 'market' ? ` ${t.type} @ ${num(t.price)}` : ''}{' '}
                      <span className="muted small">({t.source})</span>
                    </td>
                    <td className="num">{num(t.master.fillPrice)}</td>
                    <td>
                      <Badge value={t.status} />
                    </td>
                    <td>
                      {t.copiedTo} sent
                      {counts(t).map(([k, n]) => (
                        <span key={k}>
                          {' '}
                          · <Badge value={k} /> {n}
                        </span>
                      ))}
                    </td>
                  </tr>
                  {open.has(t.tradeId) && (
                    <tr id={`copies-${t.tradeId}`} className="sub">
                      <td colSpan={7}>
                        <TradeCopies trade={t} accounts={accounts.data ?? []} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
