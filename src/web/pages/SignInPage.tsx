import { useState, type FormEvent } from 'react';
import { api, must } from '../api/client';
import { ApiError } from '../api/errors';
import { Alert } from '../components/Alert';
import { saveSession } from '../lib/session';
import { useQuery } from '../hooks/useQuery';
import { SignUpForm } from './SignUpPage';

/** Sign in with email and password; the access token lives in sessionStorage for this tab only. */
export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Set when the password was right and the second factor is on: the code step answers it.
  const [challenge, setChallenge] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [signingUp, setSigningUp] = useState(false);
  const signUp = useQuery(async () => (await must(api.GET('/app/sign-up'))).enabled, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = challenge
        ? await must(api.POST('/app/sign-in/second-factor', { body: { challenge, code: code.trim() } }))
        : await must(api.POST('/app/sign-in', { body: { email: email.trim(), password } }));
      if ('challenge' in t) {
        setChallenge(t.challenge);
        setBusy(false);
        return;
      }
      saveSession({ accessToken: t.accessToken, expiresAt: t.expiresAt, userId: t.userId, email: email.trim() });
    } catch (err) {
      // The server's words only where they help (an unverified address); a wrong password stays one message.
      const said = err instanceof Error && /verify/i.test(err.message) ? err.message : null;
      const wrong = said ?? (challenge ? 'Wrong or used code.' : 'Wrong email or password.');
      setError(err instanceof ApiError && err.status === 401 ? new Error(wrong) : err);
      setBusy(false);
    }
  };

  if (signingUp) return <SignUpForm onBack={() => setSigningUp(false)} />;
  if (challenge)
    return (
      <main className="signin" id="main">
        <form className="card" onSubmit={(e) => void submit(e)} aria-labelledby="code-title">
          <h1 id="code-title">Second factor</h1>
          <p className="muted">Type the 6-digit code your authenticator app shows, or one of your recovery codes.</p>
          <label>
            Code
            <input
              name="code"
              autoComplete="one-time-code"
              inputMode="text"
              required
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </label>
          <Alert error={error} />
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in'}
          </button>
        </form>
      </main>
    );

  return (
    <main className="signin" id="main">
      <form className="card" onSubmit={(e) => void submit(e)} aria-labelledby="signin-title">
        <h1 id="signin-title">
          copy<span className="accent">trade</span>
        </h1>
        <p className="muted">Sign in to your copy-trading dashboard.</p>
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
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <Alert error={error} />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {signUp.data === true && (
          <button type="button" className="btn btn-small" onClick={() => setSigningUp(true)}>
            Create an account
          </button>
        )}
        <p className="muted small">
          Demo mode: the credentials are in <code>demo-credentials.json</code> in the data directory.
        </p>
      </form>
    </main>
  );
}
