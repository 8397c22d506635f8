import { useState } from 'react';
import { app, must } from '../api/client';
import type { Account, Group } from '../api/types';
import { Alert } from './Alert';

/** Puts an account in a copier group as Master or Slave, or takes it out (PUT .../assignment). */
export function AssignForm({
  account,
  groups,
  onSaved,
  compact = false,
}: {
  account: Account;
  groups: Group[];
  onSaved?: (a: Account) => void;
  compact?: boolean;
}) {
  const [groupId, setGroupId] = useState(account.groupId ?? '');
  const [role, setRole] = useState<'master' | 'slave'>(account.role);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const dirty = groupId !== (account.groupId ?? '') || role !== account.role;
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      const a = await must(
        app.PUT('/v1/accounts/{account_id}/assignment', {
          params: { path: { account_id: account.id } },
          body: { groupId: groupId || null, role },
        }),
      );
      onSaved?.(a);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className={compact ? 'assign compact' : 'assign'}>
      <label>
        Group
        <select value={groupId} onChange={(e) => setGroupId(e.target.value)} aria-label={`Group of ${account.name}`}>
          <option value="">(none)</option>
          {groups.map((g) => (
            <option key={g.id} value={g.id}>
              {g.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Role
        <select
          value={role}
          onChange={(e) => setRole(e.target.value as 'master' | 'slave')}
          aria-label={`Role of ${account.name}`}
        >
          <option value="master">Master</option>
          <option value="slave">Slave</option>
        </select>
      </label>
      <button
        type="button"
        className="btn btn-small"
        disabled={busy || (!dirty && !compact)}
        onClick={() => void save()}
      >
        {busy ? 'Saving…' : 'Assign'}
      </button>
      <Alert error={error} />
    </div>
  );
}
