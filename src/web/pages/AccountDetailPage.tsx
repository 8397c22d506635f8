import { useState } from 'react';
import { allPositions, app, must } from '../api/client';
import { Alert } from '../components/Alert';
import { Badge } from '../components/Badge';
import { EquityChart } from '../components/EquityChart';
import { AccountBridge } from '../components/BridgeHeartbeat';
import { HealthBadge } from '../components/HealthBadge';
import { PanicCloseDialog } from '../components/PanicCloseDialog';
import { PositionActions } from '../components/PositionActions';
import { RemoveAccountDialog } from '../components/RemoveAccount';
import { RetestConnection } from '../components/RetestConnection';
import { RiskLimitsForm } from '../components/RiskLimitsForm';
import { SendOrderForm } from '../components/SendOrderForm';
import { Sharing } from '../components/Sharing';
import { useAccounts } from '../hooks/useAccounts';
import { useQuery } from '../hooks/useQuery';
import { ago, money, num, platformName, signed, time } from '../lib/format';
import { Link } from '../lib/router';

/** One account: figures, health, open positions and orders (live), and its actions. */
export function AccountDetailPage({ id }: { id: string }) {
  const accounts = useAccounts();
  const account = accounts.data?.find((a) => a.id === id);
  const path = { params: { path: { account_id: id } } };
  const positions = useQuery(() => allPositions(id), [id], { live: true });
  const [history, setHistory] = useState(false);
  const orders = useQuery(
    async () =>
      (
        await must(
          app.GET('/v1/accounts/{account_id}/orders', {
            params: { path: { account_id: id }, query: history ? { history: 'true' } : {} },
          }),
        )
      ).orders,
    [id, history],
    { live: true },
  );
  const [panic, setPanic] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);

  if (accounts.data && !account)
    return (
      <section>
        <h1>Account not found</h1>
        <p>
          <Link to="/">Back to the accounts</Link>
        </p>
      </section>
    );
  if (!account)
    return (
      <section aria-busy="true">
        <Alert error={accounts.error} />
        <p>Loading…</p>
      </section>
    );

  const toggle = async () => {
    setActionError(null);
    try {
      if (account.status === 'connected') await must(app.POST('/v1/accounts/{account_id}/pause', path));
      else await must(app.POST('/v1/accounts/{account_id}/resume', path));
      await accounts.reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const floating = (positions.data ?? []).reduce((s, p) => s + (p.profit ?? 0), 0);

  return (
    <section aria-labelledby="account-title">
      <p className="crumbs">
        <Link to="/">Accounts</Link> /
      </p>
      <div className="page-head">
        <h1 id="account-title">{account.name}</h1>
        <div className="actions">
          <button type="button" className="btn" onClick={() => void toggle()}>
            {account.status === 'connected' ? 'Pause copying' : 'Resume copying'}
          </button>
          <button type="button" className="btn btn-danger" onClick={() => setPanic(true)}>
            Panic close…
          </button>
          <button type="button" className="btn btn-danger" onClick={() => setRemoving(true)}>
            Remove account…
          </button>
        </div>
      </div>
      <Alert error={actionError} />
      <dl className="facts">
        <div>
          <dt>Platform</dt>
          <dd>{platformName(account.platform)}</dd>
        </div>
        <div>
          <dt>Account</dt>
          <dd>
            {account.accountNumber}
            {account.environment ? ` (${account.environment})` : ''}
          </dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>
            <Badge value={account.role} />
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <Badge value={account.status} />
            {account.statusReason && <span className="muted small"> {account.statusReason}</span>}
            {account.status === 'unverified' && (
              <RetestConnection accountId={account.id} onDone={() => accounts.reload()} />
            )}
          </dd>
        </div>
        <div>
          <dt>Health</dt>
          <dd>
            <HealthBadge health={account.health} />
            {account.health.checkedAt && <span className="muted small"> checked {ago(account.health.checkedAt)}</span>}
          </dd>
        </div>
        <div>
          <dt>Balance</dt>
          <dd>{money(account.balance, account.currency)}</dd>
        </div>
        <div>
          <dt>Equity</dt>
          <dd>{money(account.equity, account.currency)}</dd>
        </div>
        <div>
          <dt>Floating P/L</dt>
          <dd className={floating < 0 ? 'bad' : floating > 0 ? 'good' : ''}>{money(floating, account.currency)}</dd>
        </div>
      </dl>

      {account.platform === 'platforma' && <AccountBridge accountId={account.id} currency={account.currency} />}

      {account.role === 'master' && (
        <section className="card" aria-labelledby="send-title">
          <h2 id="send-title">Send an order</h2>
          <SendOrderForm masters={[account]} defaultAccountId={account.id} onSent={() => void positions.reload()} />
        </section>
      )}

      <section className="card" aria-labelledby="pos-title">
        <h2 id="pos-title">
          Open positions <span className="muted small">({positions.data?.length ?? '…'})</span>
        </h2>
        <Alert error={positions.error} />
        {positions.data && positions.data.length === 0 ? (
          <p className="muted">Flat: no open positions.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="positions-table">
              <thead>
                <tr>
                  <th>Symbol</th>
                  <th>Side</th>
                  <th className="num">Volume</th>
                  <th className="num">Open</th>
                  <th className="num">Current price</th>
                  <th className="num">SL</th>
                  <th className="num">TP</th>
                  <th className="num">Profit{account.currency ? ` (${account.currency})` : ''}</th>
                  <th>Opened</th>
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(positions.data ?? []).map((p) => (
                  <tr key={p.id}>
                    <td>{p.symbol}</td>
                    <td>
                      <Badge value={p.side} />
                    </td>
                    <td className="num">{num(p.volume)}</td>
                    <td className="num">{num(p.openPrice)}</td>
                    <td className="num">{num(p.currentPrice)}</td>
                    <td className="num">{num(p.stopLoss)}</td>
                    <td className="num">{num(p.takeProfit)}</td>
                    <td className={`num ${(p.profit ?? 0) < 0 ? 'bad' : 'good'}`}>{signed(p.profit, 2)}</td>
                    <td>{time(p.openedAt)}</td>
                    <td className="nowrap">
                      <PositionActions accountId={account.id} position={p} onDone={() => void positions.reload()} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="orders-title">
        <div className="page-head">
          <h2 id="orders-title">Orders</h2>
          <label className="inline">
            <input type="checkbox" checked={history} onChange={(e) => setHistory(e.target.checked)} /> include filled
            and cancelled
          </label>
        </div>
        <Alert error={orders.error} />
        {orders.data && orders.data.length === 0 ? (
          <p className="muted">No {history ? '' : 'pending '}orders.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Symbol</th>
                  <th>Side</th>
                  <th>Type</th>
                  <th className="num">Volume</th>
                  <th className="num">Filled</th>
                  <th className="num">Price</th>
                  <th>Status</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {(orders.data ?? []).map((o) => (
                  <tr key={o.id}>
                    <td>{o.symbol}</td>
                    <td>{o.side}</td>
                    <td>{o.type}</td>
                    <td className="num">{num(o.volume)}</td>
                    <td className="num">{num(o.filledVolume)}</td>
                    <td className="num">{num(o.price)}</td>
                    <td>
                      <Badge value={o.status} />
                    </td>
                    <td>{time(o.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="card" aria-labelledby="eq-title">
        <h2 id="eq-title">Equity over time</h2>
        <EquityChart accounts={[account]} />
      </section>

      <section className="card" aria-labelledby="risk-title">
        <h2 id="risk-title">Risk limits</h2>
        <p className="muted small">
          Checked on this account's own equity every few seconds; a group's limits apply to each of its Slaves too, and
          the stricter wins.
        </p>
        <RiskLimitsForm scope="accounts" id={account.id} currency={account.currency} />
        <Sharing accountId={account.id} />
      </section>

      {removing && <RemoveAccountDialog account={account} onClose={() => setRemoving(false)} />}
      {panic && (
        <PanicCloseDialog
          scope={{ kind: 'account', id: account.id, name: account.name }}
          onClose={() => {
            setPanic(false);
            void positions.reload();
            void accounts.reload();
          }}
        />
      )}
    </section>
  );
}
