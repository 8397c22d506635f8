import { useState, type FormEvent } from 'react';
import { app, must } from '../api/client';
import { useQuery } from '../hooks/useQuery';
import { Alert } from './Alert';

type Role = 'owner' | 'trader' | 'read_only';
const ROLE_LABEL: Record<Role, string> = {
  read_only: 'Read-only (positions, history, reports)',
  trader: 'Trader (reads and trading)',
  owner: 'Owner (everything, sharing included)',
};

/**
 * Who else may see or act on an account: grant a role by email, take it away (docs/people.md). Shown to whoever may
 * manage the account; others get 403 for the list and the section says so.
 */
export function Sharing({ accountId }: { accountId: string }) {
  const path = { params: { path: { account_id: accountId } } };
  const q = useQuery(async () => (await must(app.GET('/v1/accounts/{account_id}/grants', path))).grants, [accountId]);
  const [user, setUser] = useState('');
  const [role, setRole] = useState<Role>('read_only');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await q.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const grant = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      await must(app.POST('/v1/accounts/{account_id}/grants', { ...path, body: { user: user.trim(), role } }));
      setUser('');
    });
  };
  const revoke = (userId: string, email: string) => {
    if (!window.confirm(`Take ${email}'s role on this account away?`)) return;
    void act(() =>
      must(
        app.DELETE('/v1/accounts/{account_id}/grants/{user_id}', {
          params: { path: { account_id: accountId, user_id: userId } },
        }),
      ),
    );
  };
  const forbidden = (q.error as { status?: number } | null)?.status === 403;

  return (
    <section className="card" aria-labelledby="share-title">
      <h2 id="share-title">Sharing</h2>
      {forbidden ? (
        <p className="muted">Only an owner of this account sees and changes who it is shared with.</p>
      ) : (
        <>
          <Alert error={error ?? q.error} />
          {q.data?.length === 0 && <p className="muted">Not shared with anyone.</p>}
          <ul className="plain" aria-label="People with a role on this account">
            {(q.data ?? []).map((g) => (
              <li key={g.userId}>
                {g.email}: {ROLE_LABEL[g.role]}{' '}
                <button
                  type="button"
                  className="btn btn-small"
                  disabled={busy}
                  onClick={() => revoke(g.userId, g.email)}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
          <form onSubmit={grant} aria-label="Share this account">
            <label>
              Email of the person (they need an account)
              <input type="email" name="share-email" required value={user} onChange={(e) => setUser(e.target.value)} />
            </label>
            <label>
              Role
              <select name="share-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {(Object.keys(ROLE_LABEL) as Role[]).map((r) => (
                  <option key={r} value={r}>
                    {ROLE_LABEL[r]}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="btn" disabled={busy}>
              Share
            </button>
          </form>
        </>
      )}
    </section>
  );
}
