import { Alert } from '../components/Alert';
import { Badge } from '../components/Badge';
import { EquityChart } from '../components/EquityChart';
import { HealthBadge } from '../components/HealthBadge';
import { useAccounts, useGroups } from '../hooks/useAccounts';
import { money, platformName } from '../lib/format';
import { Link, navigate } from '../lib/router';

/** Every connected account: platform, role, status, health, balance and equity, live. */
export function AccountsPage() {
  const accounts = useAccounts();
  const groups = useGroups();
  const groupName = (id: string | null) => (id ? (groups.data?.find((g) => g.id === id)?.name ?? id) : '—');
  const list = accounts.data ?? [];
  return (
    <section aria-labelledby="accounts-title">
      <div className="page-head">
        <h1 id="accounts-title">Accounts</h1>
        <Link to="/connect" className="btn btn-primary">
          Connect an account
        </Link>
      </div>
      <Alert error={accounts.error} />
      {accounts.loading && !accounts.data ? (
        <p aria-busy="true">Loading accounts…</p>
      ) : list.length === 0 ? (
        <p>
          No accounts yet. <Link to="/connect">Connect one</Link>.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="clickable stack-narrow" data-testid="accounts-table">
            <caption className="sr-only">Your accounts</caption>
            <thead>
              <tr>
                <th>Name</th>
                <th>Platform</th>
                <th>Role</th>
                <th>Group</th>
                <th>Status</th>
                <th>Health</th>
                <th className="num">Balance</th>
                <th className="num">Equity</th>
              </tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr
                  key={a.id}
                  onClick={(e) => {
                    if (!(e.target as HTMLElement).closest('a')) navigate(`/accounts/${a.id}`);
                  }}
                >
                  <td data-label="Name">
                    <Link to={`/accounts/${a.id}`}>{a.name}</Link>
                    <div className="muted small">
                      {a.accountNumber}
                      {a.brokerName ? ` · ${a.brokerName}` : ''}
                      {a.environment ? ` · ${a.environment}` : ''}
                    </div>
                  </td>
                  <td data-label="Platform">{platformName(a.platform)}</td>
                  <td data-label="Role">
                    <Badge value={a.role} />
                  </td>
                  <td data-label="Group">{groupName(a.groupId)}</td>
                  <td data-label="Status">
                    <Badge value={a.status} title={a.statusReason ?? undefined} />
                  </td>
                  <td data-label="Health">
                    <HealthBadge health={a.health} />
                  </td>
                  <td className="num" data-label="Balance">
                    {money(a.balance, a.currency)}
                  </td>
                  <td className="num" data-label="Equity">
                    {money(a.equity, a.currency)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.length > 0 && (
        <section className="card" aria-labelledby="equity-title">
          <h2 id="equity-title">Equity over time</h2>
          <EquityChart accounts={list} />
        </section>
      )}
    </section>
  );
}
