import { useEffect, useState, type FormEvent } from 'react';
import { api, must } from '../api/client';
import { Alert } from '../components/Alert';
import { navigate } from '../lib/router';

/** Create an account (when the operator turned sign-up on): a verification link goes to the email address. */
export function SignUpForm({ onBack }: { onBack: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await must(api.POST('/app/sign-up', { body: { email: email.trim(), password } }));
      setSent(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin" id="main">
      <form className="card" onSubmit={(e) => void submit(e)} aria-labelledby="signup-title">
        <h1 id="signup-title">Create an account</h1>
        {sent ? (
          <p role="status">
            Check your inbox: we sent a link to <strong>{email.trim()}</strong>. Open it to verify the address, then
            sign in.
          </p>
        ) : (
          <>
            <label>
              Email
              <input
                type="email"
                name="email"
                autoComplete="username"
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
            </label>
            <label>
              Password (8 characters or more)
              <input
                type="password"
                name="password"
                autoComplete="new-password"
                minLength={8}
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            </label>
            <Alert error={error} />
            <button type="submit" className="btn btn-primary" disabled={busy}>
              {busy ? 'Creating…' : 'Create the account'}
            </button>
          </>
        )}
        <button type="button" className="btn btn-small" onClick={onBack}>
          Back to sign-in
        </button>
      </form>
    </main>
  );
}

/** Where the verification email's link lands: the token is posted (a link opened by a mail scanner changes nothing). */
export function VerifyEmailPage() {
  const [state, setState] = useState<'idle' | 'busy' | 'done'>('idle');
  const [error, setError] = useState<unknown>(null);
  const token = new URLSearchParams(location.search).get('token') ?? '';
  useEffect(() => {
    if (!token) setError(new Error('This link has no token: open the link from the email again.'));
  }, [token]);
  const verify = async () => {
    setState('busy');
    setError(null);
    try {
      await must(api.POST('/app/verify-email', { body: { token } }));
      setState('done');
    } catch (err) {
      setError(err);
      setState('idle');
    }
  };
  return (
    <main className="signin" id="main">
      <section className="card" aria-labelledby="verify-title">
        <h1 id="verify-title">Verify your email address</h1>
        <Alert error={error} />
        {state === 'done' ? (
          <p role="status">Verified. You can sign in now.</p>
        ) : (
          <button type="button" className="btn btn-primary" disabled={!token || state === 'busy'} onClick={verify}>
            Verify
          </button>
        )}
        <button type="button" className="btn btn-small" onClick={() => navigate('/')}>
          Go to sign-in
        </button>
      </section>
    </main>
  );
}
