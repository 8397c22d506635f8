import { useState, type FormEvent } from 'react';
import { allPages, app, documentedRoutes, must } from '../api/client';
import type { WebhookEndpoint } from '../api/types';
import { useQuery } from '../hooks/useQuery';
import { ago, time } from '../lib/format';
import { Alert } from './Alert';
import { Badge } from './Badge';
import { CopyButton } from './CopyButton';

/** Webhook endpoints (when the service offers them): add (the signing secret is shown once), test, rotate the secret, enable/disable, delete. */
export function WebhookEndpoints() {
  const available = useQuery(async () => (await documentedRoutes()).has('/v1/webhook-endpoints'), []);
  const list = useQuery(
    () =>
      allPages(async (cursor) => {
        const r = await must(
          app.GET('/v1/webhook-endpoints', { params: { query: { limit: '200', ...(cursor ? { cursor } : {}) } } }),
        );
        return { items: r.endpoints, nextCursor: r.nextCursor };
      }),
    [available.data],
    { enabled: available.data === true },
  );
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const act = async (fn: () => Promise<void>) => {
    setError(null);
    setNote(null);
    try {
      await fn();
      await list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const create = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const eventTypes = events.split(/[\s,]+/).filter(Boolean);
      const r = await must(
        app.POST('/v1/webhook-endpoints', {
          body: {
            url: url.trim(),
            ...(description.trim() ? { description: description.trim() } : {}),
            ...(eventTypes.length ? { eventTypes } : {}),
          },
        }),
      );
      setSecret({ url: r.url, secret: r.secret });
      setUrl('');
      setDescription('');
    });
  };
  const p = (ep: WebhookEndpoint) => ({ params: { path: { endpoint_id: ep.id } } });
  const test = (ep: WebhookEndpoint) =>
    void act(async () => {
      const a = await must(app.POST('/v1/webhook-endpoints/{endpoint_id}/test', p(ep)));
      setNote(
        `Test delivery to ${ep.url}: ${a.ok ? 'delivered' : 'failed'}${a.status ? ` (HTTP ${a.status})` : ''}${a.error ? `: ${a.error}` : ''}.`,
      );
    });
  const rotate = (ep: WebhookEndpoint) =>
    void act(async () => {
      const r = await must(app.POST('/v1/webhook-endpoints/{endpoint_id}/rotate-secret', { ...p(ep), body: {} }));
      setSecret({ url: r.url, secret: r.secret });
    });
  const toggle = (ep: WebhookEndpoint) =>
    void act(async () => {
      await must(app.PATCH('/v1/webhook-endpoints/{endpoint_id}', { ...p(ep), body: { enabled: !ep.enabled } }));
    });
  const remove = (ep: WebhookEndpoint) => {
    if (!window.confirm(`Delete the webhook endpoint ${ep.url} and its delivery history?`)) return;
    void act(async () => {
      await must(app.DELETE('/v1/webhook-endpoints/{endpoint_id}', p(ep)));
    });
  };

  return (
    <section className="card" aria-labelledby="wh-title">
      <h2 id="wh-title">Webhook endpoints</h2>
      {available.data === undefined ? (
        <p aria-busy="true">Checking…</p>
      ) : !available.data ? (
        <p className="muted">This service does not offer webhook endpoints.</p>
      ) : (
        <>
          <p className="muted small">
            Deliveries are signed with the Standard Webhooks scheme; verify them with the endpoint's secret.
          </p>
          <form className="inline-form" onSubmit={create} aria-label="Add a webhook endpoint">
            <label className="sr-only" htmlFor="wh-url">
              Endpoint URL
            </label>
            <input
              id="wh-url"
              type="url"
              placeholder="https://example.com/hooks/copytrade"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
            />
            <label className="sr-only" htmlFor="wh-desc">
              Description
            </label>
            <input
              id="wh-desc"
              placeholder="description (optional)"
              value={description}
              onChange={(e) => setDescription(e.target.value)}
            />
            <label className="sr-only" htmlFor="wh-events">
              Event types
            </label>
            <input
              id="wh-events"
              placeholder="event types (empty: all)"
              value={events}
              onChange={(e) => setEvents(e.target.value)}
            />
            <button type="submit" className="btn btn-primary">
              Add endpoint
            </button>
          </form>
          {secret && (
            <div className="alert alert-good secret" role="status">
              Signing secret of {secret.url}, shown this once:
              <div className="secret-row">
                <code>{secret.secret}</code>
                <CopyButton value={secret.secret} />
                <button type="button" className="btn btn-small" onClick={() => setSecret(null)}>
                  Hide
                </button>
              </div>
            </div>
          )}
          {note && (
            <div className="alert alert-info" role="status">
              {note}
            </div>
          )}
          <Alert error={error ?? list.error} />
          {list.data && list.data.length === 0 ? (
            <p className="muted">No endpoints.</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>URL</th>
                    <th>Events</th>
                    <th>State</th>
                    <th>Created</th>
                    <th>
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {(list.data ?? []).map((ep) => (
                    <tr key={ep.id}>
                      <td>
                        <code>{ep.url}</code>
                        {ep.description && <div className="muted small">{ep.description}</div>}
                      </td>
                      <td className="small">{ep.eventTypes.length ? ep.eventTypes.join(', ') : 'all'}</td>
                      <td>
                        <Badge
                          value={!ep.enabled ? 'disabled' : ep.failingSince ? 'failing' : 'active'}
                          title={ep.disabledReason ?? undefined}
                        />
                        {ep.failingSince && <span className="muted small"> since {ago(ep.failingSince)}</span>}
                        {ep.disabledReason && <div className="muted small">{ep.disabledReason}</div>}
                      </td>
                      <td>{time(ep.createdAt)}</td>
                      <td className="row-actions">
                        <button type="button" className="btn btn-small" onClick={() => test(ep)}>
                          Send test
                        </button>
                        <button type="button" className="btn btn-small" onClick={() => rotate(ep)}>
                          Rotate secret
                        </button>
                        <button type="button" className="btn btn-small" onClick={() => toggle(ep)}>
                          {ep.enabled ? 'Disable' : 'Enable'}
                        </button>
                        <button type="button" className="btn btn-small btn-danger" onClick={() => remove(ep)}>
                          Delete
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
