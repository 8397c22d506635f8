import { useState } from 'react';
import { api, app, documentedRoutes, must } from '../api/client';
import type { AlertRule } from '../api/types';
import { Alert } from '../components/Alert';
import { AlertChannels } from '../components/AlertChannels';
import { useQuery } from '../hooks/useQuery';
import { ago } from '../lib/format';

const LABELS: Record<string, string> = {
  account_disconnected: 'An account disconnects',
  copy_rejected: "A Slave's broker refuses a copy",
  risk_triggered: 'A risk limit trips',
  panic_close_started: 'A panic-close starts',
  panic_close_finished: 'A panic-close ends',
};

/** Built-in alerts: channels, which events alert, and (demo mode only) the in-memory inbox. */
export function AlertsPage() {
  const [inboxTick, setInboxTick] = useState(0);
  return (
    <>
      <h1>Alerts</h1>
      <p className="muted">
        A message by email or Telegram when something needs you. A burst of events is one message per channel a minute,
        with the counts and the first few.
      </p>
      <AlertChannels onSent={() => setInboxTick((n) => n + 1)} />
      <Rules />
      <DemoInbox tick={inboxTick} />
    </>
  );
}

function Rules() {
  const q = useQuery(async () => (await must(app.GET('/v1/alert-rules'))).rules, []);
  const [error, setError] = useState<unknown>(null);
  const set = async (r: AlertRule, enabled: boolean) => {
    setError(null);
    try {
      await must(app.PUT('/v1/alert-rules', { body: { rules: [{ kind: r.kind, enabled }] } }));
      await q.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="card" aria-labelledby="ar-title">
      <h2 id="ar-title">What alerts</h2>
      <Alert error={error ?? q.error} />
      <fieldset className="plain">
        <legend className="sr-only">Kinds of event that send an alert</legend>
        {(q.data ?? []).map((r) => (
          <div key={r.kind}>
            <label className="inline">
              <input type="checkbox" checked={r.enabled} onChange={(e) => void set(r, e.target.checked)} />{' '}
              {LABELS[r.kind] ?? r.kind}
            </label>
          </div>
        ))}
      </fieldset>
    </section>
  );
}

/** Demo mode without an SMTP server: the messages kept in memory instead of sent. Not shown elsewhere. */
function DemoInbox({ tick }: { tick: number }) {
  const offered = useQuery(async () => (await documentedRoutes()).has('/app/demo/alert-inbox'), []);
  const q = useQuery(async () => (await must(api.GET('/app/demo/alert-inbox'))).messages, [offered.data, tick], {
    enabled: offered.data === true,
    live: true,
  });
  if (offered.data !== true) return null;
  return (
    <section className="card" aria-labelledby="ai-title">
      <h2 id="ai-title">Demo inbox</h2>
      <p className="muted small">
        Demo only: no mail server is set, so messages are kept here in memory (the last 50) and nothing leaves this
        machine.
      </p>
      <Alert error={q.error} />
      {q.data?.length === 0 && <p className="muted">No messages yet: send a test, or panic-close a group.</p>}
      <ul className="plain" aria-label="Demo inbox messages">
        {(q.data ?? []).map((m) => (
          <li key={`${m.at}-${m.channelId}-${m.subject}`}>
            <strong>{m.subject}</strong>{' '}
            <span className="muted small">
              to {m.to}, {ago(m.at)}
            </span>
            <pre className="small">{m.text}</pre>
          </li>
        ))}
      </ul>
    </section>
  );
}
