import { useState, type FormEvent } from 'react';
import { app, must } from '../api/client';
import type { AlertChannel, AlertDelivery } from '../api/types';
import { useQuery } from '../hooks/useQuery';
import { ago } from '../lib/format';
import { Alert } from './Alert';
import { Badge } from './Badge';

const where = (c: AlertChannel) =>
  c.kind === 'email' ? c.email : `Telegram chat ${c.chatId} (bot token ${c.botTokenMasked ?? 'not set'})`;

const outcome = (d: AlertDelivery) =>
  `${d.ok ? 'sent' : 'failed'}${d.status ? ` (${d.status})` : ''}${d.error ? `: ${d.error}` : ''}`;

/** A user's alert channels: add an email or a Telegram chat, send a test, enable/disable, delete, last sends. */
export function AlertChannels({ onSent }: { onSent?: () => void }) {
  const list = useQuery(async () => (await must(app.GET('/v1/alert-channels'))).channels, [], { live: true });
  const [kind, setKind] = useState<'email' | 'telegram'>('email');
  const [email, setEmail] = useState('');
  const [botToken, setBotToken] = useState('');
  const [chatId, setChatId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);

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
      await must(
        app.POST('/v1/alert-channels', {
          body:
            kind === 'email'
              ? { kind, email: email.trim() }
              : { kind, botToken: botToken.trim(), chatId: chatId.trim() },
        }),
      );
      setEmail('');
      setBotToken('');
      setChatId('');
    });
  };
  const p = (c: AlertChannel) => ({ params: { path: { channel_id: c.id } } });
  const test = (c: AlertChannel) =>
    void act(async () => {
      const d = await must(app.POST('/v1/alert-channels/{channel_id}/test', p(c)));
      setNote(`Test message to ${where(c)}: ${outcome(d)}.`);
      onSent?.();
    });
  const toggle = (c: AlertChannel) =>
    void act(async () => {
      await must(app.PATCH('/v1/alert-channels/{channel_id}', { ...p(c), body: { enabled: !c.enabled } }));
    });
  const remove = (c: AlertChannel) => {
    if (!window.confirm(`Delete the alert channel ${where(c)} and its delivery history?`)) return;
    void act(async () => {
      await must(app.DELETE('/v1/alert-channels/{channel_id}', p(c)));
    });
  };

  return (
    <section className="card" aria-labelledby="ac-title">
      <h2 id="ac-title">Channels</h2>
      <form className="inline-form" onSubmit={create} aria-label="Add an alert channel">
        <label htmlFor="ac-kind">Channel kind</label>
        <select id="ac-kind" value={kind} onChange={(e) => setKind(e.target.value as 'email' | 'telegram')}>
          <option value="email">Email</option>
          <option value="telegram">Telegram</option>
        </select>
        {kind === 'email' ? (
          <>
            <label className="sr-only" htmlFor="ac-email">
              Email address
            </label>
            <input
              id="ac-email"
              type="email"
              placeholder="you@example.com"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              required
            />
          </>
        ) : (
          <>
            <label className="sr-only" htmlFor="ac-token">
              Bot token
            </label>
            <input
              id="ac-token"
              type="password"
              autoComplete="off"
              placeholder="bot token from BotFather"
              value={botToken}
              onChange={(e) => setBotToken(e.target.value)}
              required
            />
            <label className="sr-only" htmlFor="ac-chat">
              Chat id
            </label>
            <input
              id="ac-chat"
              placeholder="chat id"
              value={chatId}
              onChange={(e) => setChatId(e.target.value)}
              required
            />
          </>
        )}
        <button type="submit" className="btn btn-primary">
          Add channel
        </button>
      </form>
      {note && (
        <div className="alert alert-info" role="status">
          {note}
        </div>
      )}
      <Alert error={error ?? list.error} />
      {list.data && list.data.length === 0 ? (
        <p className="muted">No channels yet: add one to get a message when something needs you.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label="Alert channels">
            <thead>
              <tr>
                <th scope="col">Sends to</th>
                <th scope="col">State</th>
                <th scope="col">Last message</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {(list.data ?? []).map((c) => (
                <tr key={c.id}>
                  <td>
                    {c.name && <div>{c.name}</div>}
                    <span className="small">{where(c)}</span>
                  </td>
                  <td>
                    <Badge
                      value={!c.enabled ? 'disabled' : c.failures > 0 ? 'failed' : 'active'}
                      title={c.failures > 0 ? `${c.failures} failed tries of the pending message` : undefined}
                    />
                  </td>
                  <td>{c.lastSentAt ? ago(c.lastSentAt) : '—'}</td>
                  <td className="actions">
                    <button type="button" className="btn btn-small" onClick={() => test(c)}>
                      Send a test
                    </button>
                    <button type="button" className="btn btn-small" onClick={() => toggle(c)}>
                      {c.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => setOpen(open === c.id ? null : c.id)}
                      aria-expanded={open === c.id}
                    >
                      Deliveries
                    </button>
                    <button type="button" className="btn btn-small btn-danger" onClick={() => remove(c)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <Deliveries channelId={open} />}
    </section>
  );
}

function Deliveries({ channelId }: { channelId: string }) {
  const q = useQuery(
    async () =>
      (
        await must(
          app.GET('/v1/alert-channels/{channel_id}/deliveries', { params: { path: { channel_id: channelId } } }),
        )
      ).deliveries,
    [channelId],
    { live: true },
  );
  return (
    <div className="table-wrap">
      <table aria-label="Deliveries of the channel">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Message</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {(q.data ?? []).map((d) => (
            <tr key={d.id}>
              <td>{ago(d.createdAt)}</td>
              <td>
                {d.subject}
                {d.trigger === 'scheduled' && <span className="muted small"> (attempt {d.attempt})</span>}
              </td>
              <td>{outcome(d)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {q.data?.length === 0 && <p className="muted">Nothing sent yet.</p>}
    </div>
  );
}
