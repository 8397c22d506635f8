import { useState, type FormEvent } from 'react';
import { allPages, api, must } from '../api/client';
import type { ApiKey } from '../api/types';
import { useQuery } from '../hooks/useQuery';
import { ago, time } from '../lib/format';
import { Alert } from './Alert';
import { Badge } from './Badge';
import { CopyButton } from './CopyButton';

/** API keys for family V: create (the key is shown once), rotate (the old key keeps working for the overlap), revoke. */
export function ApiKeys() {
  const keys = useQuery(
    () =>
      allPages(async (cursor) => {
        const r = await must(
          api.GET('/app/api-keys', { params: { query: { limit: '200', ...(cursor ? { cursor } : {}) } } }),
        );
        return { items: r.keys, nextCursor: r.nextCursor };
      }),
    [],
  );
  const [name, setName] = useState('');
  const [shown, setShown] = useState<{ apiKey: string; key: ApiKey; note: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await keys.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const create = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const r = await must(api.POST('/app/api-keys', { body: { name: name.trim() } }));
      setShown({ apiKey: r.apiKey, key: r.key, note: 'New key' });
      setName('');
    });
  };
  const rotate = (k: ApiKey) =>
    void act(async () => {
      const r = await must(api.POST('/app/api-keys/{key_id}/rotate', { params: { path: { key_id: k.id } }, body: {} }));
      setShown({
        apiKey: r.apiKey,
        key: r.key,
        note: `Replaces ${k.name} (${k.prefix}…), which keeps working until ${time(r.previousKeyExpiresAt)}, sharing the new key's rate limit and counting toward your number of keys until then`,
      });
    });
  const revoke = (k: ApiKey) => {
    const also = (keys.data ?? []).some((x) => x.replacedBy === k.id && x.state === 'expiring')
      ? ' The key it replaced, still in its overlap, is revoked with it.'
      : '';
    if (!window.confirm(`Revoke the key "${k.name}" (${k.prefix}…)? Programs using it stop working at once.${also}`))
      return;
    void act(async () => {
      await must(api.DELETE('/app/api-keys/{key_id}', { params: { path: { key_id: k.id } } }));
      if (shown?.key.id === k.id) setShown(null);
    });
  };

  return (
    <section className="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p className="muted">
        Family V (<code>/v1</code>) takes <code>Authorization: Bearer &lt;API_KEY&gt;</code>. Keep keys out of emails,
        support requests and published material.
      </p>
      <form className="inline-form" onSubmit={create} aria-label="Create an API key">
        <label className="sr-only" htmlFor="key-name">
          Key name
        </label>
        <input
          id="key-name"
          placeholder="Key name, e.g. trading bot"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Create key
        </button>
      </form>
      {shown && (
        <div className="alert alert-good secret" role="status" data-testid="new-key">
          <strong>
            {shown.note}: {shown.key.name}.
          </strong>{' '}
          Copy it now; it is shown only once.
          <div className="secret-row">
            <code data-testid="new-key-value">{shown.apiKey}</code>
            <CopyButton value={shown.apiKey} />
            <button type="button" className="btn btn-small" onClick={() => setShown(null)}>
              Hide
            </button>
          </div>
        </div>
      )}
      <Alert error={error ?? keys.error} />
      <div className="table-wrap">
        <table data-testid="keys-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>State</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Expires</th>
              <th>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((k) => (
              <tr key={k.id} data-key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>
                  <Badge value={k.state} />
                </td>
                <td>{time(k.createdAt)}</td>
                <td>{k.lastUsedAt ? ago(k.lastUsedAt) : 'never'}</td>
                <td>{k.revokedAt ? `revoked ${time(k.revokedAt)}` : k.expiresAt ? time(k.expiresAt) : '—'}</td>
                <td className="row-actions">
                  {k.state === 'active' && (
                    <button
                      type="button"
                      className="btn btn-small"
                      disabled={busy}
                      onClick={() => rotate(k)}
                      aria-label={`Rotate ${k.name}`}
                    >
                      Rotate
                    </button>
                  )}
                  {k.state !== 'revoked' && k.state !== 'expired' && (
                    <button
                      type="button"
                      className="btn btn-small btn-danger"
                      disabled={busy}
                      onClick={() => revoke(k)}
                      aria-label={`Revoke ${k.name}`}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
