import { useState, type FormEvent } from 'react';
import { app, must } from '../api/client';
import type { Group } from '../api/types';
import { Alert } from '../components/Alert';
import { AssignForm } from '../components/AssignForm';
import { Badge } from '../components/Badge';
import { CopyRuleForm } from '../components/CopyRuleForm';
import { GroupActions } from '../components/GroupActions';
import { RiskLimitsForm } from '../components/RiskLimitsForm';
import { HealthBadge } from '../components/HealthBadge';
import { PanicCloseDialog } from '../components/PanicCloseDialog';
import { useAccounts, useGroups } from '../hooks/useAccounts';
import { money } from '../lib/format';
import { Link } from '../lib/router';
import { describeRule } from '../lib/rule-form';

/** Copier groups: each with its Master and Slaves and every Slave's rule; create groups; assign accounts. */
export function GroupsPage() {
  const groups = useGroups();
  const accounts = useAccounts();
  const [name, setName] = useState('');
  const [createError, setCreateError] = useState<unknown>(null);
  const [panic, setPanic] = useState<Group | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setCreateError(null);
    try {
      await must(app.POST('/v1/copier-groups', { body: { name: name.trim() } }));
      setName('');
      await groups.reload();
    } catch (err) {
      setCreateError(err);
    }
  };
  const refresh = () => {
    void groups.reload();
    void accounts.reload();
  };
  const list = groups.data ?? [];

  return (
    <section aria-labelledby="groups-title">
      <div className="page-head">
        <h1 id="groups-title">Copier groups</h1>
        <form className="inline-form" onSubmit={(e) => void create(e)} aria-label="Create a copier group">
          <label className="sr-only" htmlFor="new-group">
            New group name
          </label>
          <input
            id="new-group"
            placeholder="New group name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={100}
          />
          <button type="submit" className="btn btn-primary">
            Create group
          </button>
        </form>
      </div>
      <Alert error={createError ?? groups.error} />
      {groups.loading && !groups.data && <p aria-busy="true">Loading…</p>}
      {list.map((g) => (
        <article key={g.id} className="card group" aria-labelledby={`g-${g.id}`} data-testid="group-card">
          <div className="page-head">
            <h2 id={`g-${g.id}`}>{g.name}</h2>
            <button
              type="button"
              className="btn btn-danger"
              onClick={() => setPanic(g)}
              disabled={!g.master && g.slaves.length === 0}
            >
              Panic close group…
            </button>
          </div>
          <GroupActions group={g} onChanged={refresh} />
          <p className="small">
            <Link to={`/groups/${encodeURIComponent(g.id)}/service-levels`}>
              Service levels<span className="sr-only"> of {g.name}</span>
            </Link>
            : each Slave's latency, success, slippage and drift against a target, and the month's history.
          </p>
          <h3>Master</h3>
          {g.master ? (
            <p>
              <Link to={`/accounts/${g.master.id}`}>{g.master.name}</Link> <Badge value={g.master.status} />{' '}
              <HealthBadge health={g.master.health} />{' '}
              <span className="muted">{money(g.master.equity, g.master.currency)}</span>
            </p>
          ) : (
            <p className="muted">No Master yet: assign one below.</p>
          )}
          <h3>Slaves ({g.slaves.length})</h3>
          {g.slaves.length === 0 ? (
            <p className="muted">No Slaves yet.</p>
          ) : (
            <ul className="slaves">
              {g.slaves.map((s) => (
                <li key={s.id}>
                  <div className="slave-row">
                    <span>
                      <Link to={`/accounts/${s.id}`}>{s.name}</Link> <Badge value={s.status} />{' '}
                      <HealthBadge health={s.health} />
                    </span>
                    <span className="muted small">{describeRule(s.rule)}</span>
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-expanded={editing === s.id}
                      aria-controls={`rule-${s.id}`}
                      onClick={() => setEditing(editing === s.id ? null : s.id)}
                    >
                      {editing === s.id ? 'Close rule' : 'Edit rule'}
                    </button>
                  </div>
                  {editing === s.id && (
                    <div id={`rule-${s.id}`} className="rule-panel">
                      <CopyRuleForm accountId={s.id} rule={s.rule} onSaved={() => void groups.reload()} />
                    </div>
                  )}
                </li>
              ))}
            </ul>
          )}
          <details className="group-risk">
            <summary>Risk limits of the group (each Slave on its own equity)</summary>
            <RiskLimitsForm scope="copier-groups" id={g.id} />
          </details>
        </article>
      ))}

      <section className="card" aria-labelledby="assign-title">
        <h2 id="assign-title">Assign accounts</h2>
        <Alert error={accounts.error} />
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Account</th>
                <th>Now</th>
                <th>Move to</th>
              </tr>
            </thead>
            <tbody>
              {(accounts.data ?? []).map((a) => (
                <tr key={`${a.id}:${a.groupId}:${a.role}`}>
                  <td>
                    {a.name}
                    <div className="muted small">{a.accountNumber}</div>
                  </td>
                  <td>
                    <Badge value={a.role} />{' '}
                    {list.find((g) => g.id === a.groupId)?.name ?? <span className="muted">no group</span>}
                  </td>
                  <td>
                    <AssignForm account={a} groups={list} onSaved={refresh} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      {panic && (
        <PanicCloseDialog
          scope={{
            kind: 'group',
            id: panic.id,
            name: panic.name,
            accounts: [...(panic.master ? [panic.master] : []), ...panic.slaves].map((a) => ({
              id: a.id,
              name: a.name,
            })),
          }}
          onClose={() => {
            setPanic(null);
            refresh();
          }}
        />
      )}
    </section>
  );
}
