import { useState, type FormEvent } from 'react';
import { api, app, must } from '../api/client';
import { Alert } from '../components/Alert';
import { CopyButton } from '../components/CopyButton';
import { useQuery } from '../hooks/useQuery';

/** The signed-in user's second factor (enrol, recovery codes, disable) and what others shared with them. */
export function SecurityPage() {
  return (
    <>
      <h1>Security</h1>
      <SecondFactor />
      <SharedWithMe />
    </>
  );
}

function SecondFactor() {
  const status = useQuery(() => must(api.GET('/app/second-factor')), []);
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauthUri: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      setCode('');
      await status.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const enrol = () => void act(async () => setEnrolment(await must(api.POST('/app/second-factor/enrol'))));
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const r = await must(api.POST('/app/second-factor/confirm', { body: { code: code.trim() } }));
      setCodes(r.recoveryCodes);
      setEnrolment(null);
    });
  };
  const disable = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      await must(api.POST('/app/second-factor/disable', { body: { code: code.trim() } }));
      setCodes(null);
    });
  };
  const on = status.data?.enabled === true;

  return (
    <section className="card" aria-labelledby="sf-title">
      <h2 id="sf-title">Second factor</h2>
      <Alert error={error ?? status.error} />
      {status.data && (
        <p data-testid="second-factor-status">
          {on
            ? `On. ${status.data.recoveryCodesLeft} recovery code(s) left.`
            : 'Off: signing in asks for your password only.'}
        </p>
      )}
      {codes && (
        <div className="alert alert-good secret" role="status">
          <p>
            <strong>Your recovery codes, shown this once.</strong> Each signs you in once if you lose your phone. Keep
            them somewhere safe.
          </p>
          <ul className="plain" aria-label="Recovery codes" data-testid="recovery-codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <CopyButton value={codes.join('\n')} label="Copy the codes" />
        </div>
      )}
      {!on && !enrolment && (
        <button type="button" className="btn btn-primary" disabled={busy} onClick={enrol}>
          Set up an authenticator app
        </button>
      )}
      {!on && enrolment && (
        <form onSubmit={confirm} aria-label="Confirm the authenticator app">
          <p>Add this secret to your authenticator app (or open the link on the phone), then type the code it shows.</p>
          <p>
            Secret: <code data-testid="totp-secret">{enrolment.secret}</code>{' '}
            <CopyButton value={enrolment.secret} label="Copy the secret" />
          </p>
          <p className="small">
            <a href={enrolment.otpauthUri}>Open in an authenticator app</a>
          </p>
          <label>
            Code from the app
            <input
              name="code"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </label>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            Turn on
          </button>
        </form>
      )}
      {on && (
        <form onSubmit={disable} aria-label="Turn the second factor off">
          <label>
            A code from the app, or a recovery code
            <input name="code" required value={code} onChange={(e) => setCode(e.target.value)} />
          </label>
          <button type="submit" className="btn" disabled={busy}>
            Turn off
          </button>
        </form>
      )}
    </section>
  );
}

function SharedWithMe() {
  const q = useQuery(async () => (await must(app.GET('/v1/shared-with-me'))).shared, []);
  return (
    <section className="card" aria-labelledby="sw-title">
      <h2 id="sw-title">Shared with you</h2>
      <Alert error={q.error} />
      {q.data?.length === 0 && <p className="muted">Nobody has shared an account or a group with you.</p>}
      <ul className="plain">
        {(q.data ?? []).map((g) => (
          <li key={`${g.resourceKind}-${g.resourceId}`}>
            <strong>{g.name}</strong> ({g.resourceKind}, {g.role.replace('_', '-')}, from {g.ownerEmail})
          </li>
        ))}
      </ul>
    </section>
  );
}
