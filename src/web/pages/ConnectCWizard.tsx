import { useEffect, useRef, useState, type FormEvent } from 'react';
import {
  confirmPlatformC,
  isPlatformCMessage,
  platformCConnection,
  startPlatformC,
  type PlatformCAccount,
} from '../api/connect';
import type { TestedAccount } from '../api/types';
import { Alert } from '../components/Alert';
import { DemoLogins } from '../components/DemoLogins';
import { ConnectError } from '../components/ConnectError';
import { Connected } from '../components/Connected';
import { GroupPicker, placementBody, type Placement } from '../components/GroupPicker';
import { Steps } from '../components/Steps';
import { useGroups } from '../hooks/useAccounts';
import { platformName } from '../lib/format';
import { Link } from '../lib/router';

const STEPS = ['Authorize', 'Select the account', 'Verify and connect', 'Connected'];
const POPUP = 'popup=yes,width=520,height=720';
const key = (a: PlatformCAccount) => a.ctidTraderAccountId;
const number = (a: PlatformCAccount) => a.accountNumber ?? a.ctidTraderAccountId;

/**
 * Platform C: the authorization window (a popup the browser must allow), approval at the platform, then pick
 * the returned account, verify account and environment, and connect it to a group. The popup ends on our
 * callback, which posts {type:'copytrade:platformc', connectionId, ok, error?} back here and closes.
 */
export function ConnectCWizard() {
  const groups = useGroups();
  const [step, setStep] = useState(0);
  const [phase, setPhase] = useState<'idle' | 'blocked' | 'waiting' | 'loading'>('idle');
  const [connectionId, setConnectionId] = useState('');
  const [found, setFound] = useState<PlatformCAccount[]>([]);
  const [picked, setPicked] = useState('');
  const [verified, setVerified] = useState(false);
  const [place, setPlace] = useState<Placement>({ groupId: '', role: 'slave' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [account, setAccount] = useState<TestedAccount | null>(null);
  const popup = useRef<Window | null>(null);
  const conn = useRef('');

  const loadAccounts = async (id: string) => {
    setPhase('loading');
    try {
      const r = await platformCConnection(id);
      setFound(r.accounts);
      setPicked(r.accounts.length === 1 ? key(r.accounts[0]!) : '');
      setStep(1);
      setPhase('idle');
    } catch (err) {
      setError(err);
      setPhase('idle');
    }
  };

  // The callback page's message, and a popup the user closed before approving.
  // biome-ignore lint/correctness/useExhaustiveDependencies: loadAccounts is a new function each render; the listeners belong to the waiting phase only
  useEffect(() => {
    if (phase !== 'waiting') return;
    let done = false;
    const onMessage = (e: MessageEvent) => {
      if (
        e.origin !== location.origin ||
        !isPlatformCMessage(e.data) ||
        (e.data.connectionId !== null && e.data.connectionId !== conn.current)
      )
        return;
      done = true;
      popup.current = null;
      if (e.data.ok) void loadAccounts(conn.current);
      else {
        setPhase('idle');
        setError(
          new Error(
            `The authorization did not complete: ${e.data.error ?? 'unknown reason'}. Open the window again to retry.`,
          ),
        );
      }
    };
    window.addEventListener('message', onMessage);
    const watch = window.setInterval(() => {
      if (done || !popup.current || !popup.current.closed) return;
      window.setTimeout(() => {
        if (done) return;
        done = true;
        void platformCConnection(conn.current).then(
          (c) => {
            if (c.status === 'authorized') return loadAccounts(conn.current);
            setPhase('idle');
            setError(
              new Error(
                c.status === 'failed'
                  ? `The authorization did not complete: ${c.error ?? 'unknown reason'}.`
                  : 'The authorization window was closed before the access was approved. Open it again to retry.',
              ),
            );
          },
          (err: unknown) => {
            setPhase('idle');
            setError(err);
          },
        );
      }, 1500);
      window.clearInterval(watch);
    }, 500);
    return () => {
      window.removeEventListener('message', onMessage);
      window.clearInterval(watch);
    };
  }, [phase]);

  const authorize = async () => {
    setError(null);
    // Open the window inside the click, before any await, or the browser blocks it.
    const w = window.open('', 'copytrade-platformc', POPUP);
    if (!w || w.closed) {
      setPhase('blocked');
      return;
    }
    try {
      w.document.title = 'Authorization';
      w.document.body.textContent = 'Opening the authorization page…';
    } catch {
      /* not ours to write to */
    }
    popup.current = w;
    try {
      const r = await startPlatformC();
      conn.current = r.connectionId;
      setConnectionId(r.connectionId);
      w.location.href = r.authorizationUrl;
      setPhase('waiting');
    } catch (err) {
      w.close();
      popup.current = null;
      setPhase('idle');
      setError(err);
    }
  };

  const chosen = found.find((a) => key(a) === picked);
  const confirm = async (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    setBusy(true);
    setError(null);
    try {
      setAccount(
        await confirmPlatformC({
          connectionId,
          ctidTraderAccountId: chosen.ctidTraderAccountId,
          accountNumber: number(chosen),
          environment: chosen.environment === 'live' ? 'live' : 'demo',
          ...placementBody(place),
        }),
      );
      setStep(3);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="wc-title">
      <p className="crumbs">
        <Link to="/connect">Connect</Link> /
      </p>
      <h1 id="wc-title">Connect a {platformName('platformc')} account</h1>
      <Steps steps={STEPS} current={step} />
      {step === 0 && <DemoLogins platform="platformc" />}
      <div className="card wizard">
        {step === 0 && (
          <>
            <p>The platform asks you to approve access in its own window. Your browser must allow this site's popup.</p>
            {phase === 'blocked' && (
              <div className="alert alert-bad" role="alert" data-testid="popup-blocked">
                <strong>The popup was blocked.</strong> Allow popups for this site (the icon at the end of the address
                bar), then press “Open the authorization window” again.
              </div>
            )}
            {phase === 'waiting' && (
              <div role="status" aria-live="polite">
                <progress aria-label="Waiting for approval" />
                <p>
                  Waiting for you to approve the access in the authorization window…{' '}
                  <button type="button" className="btn btn-small" onClick={() => popup.current?.focus()}>
                    Show the window
                  </button>
                </p>
              </div>
            )}
            {phase === 'loading' && (
              <p role="status" aria-busy="true">
                Approved. Reading the accounts…
              </p>
            )}
            <ConnectError error={error} />
            <div className="actions">
              <button
                type="button"
                className="btn btn-primary"
                onClick={() => void authorize()}
                disabled={phase === 'waiting' || phase === 'loading'}
              >
                Open the authorization window
              </button>
            </div>
          </>
        )}
        {step === 1 && (
          <>
            {found.length === 0 ? (
              <Alert
                error={
                  new Error(
                    'The approval returned no trading account. Approve at least one account in the authorization window.',
                  )
                }
              />
            ) : (
              <fieldset className="choices">
                <legend>Select the account to connect</legend>
                {found.map((a) => (
                  <label key={key(a)}>
                    <input
                      type="radio"
                      name="account"
                      value={key(a)}
                      checked={picked === key(a)}
                      onChange={() => {
                        setPicked(key(a));
                        setVerified(false);
                      }}
                    />{' '}
                    <strong>#{number(a)}</strong> · {a.environment} · {a.brokerName ?? 'broker'}
                  </label>
                ))}
              </fieldset>
            )}
            <ConnectError error={error} />
            <div className="actions">
              <button
                type="button"
                className="btn"
                onClick={() => {
                  setStep(0);
                  setPhase('idle');
                }}
              >
                Back
              </button>
              <button type="button" className="btn btn-primary" disabled={!chosen} onClick={() => setStep(2)}>
                Next
              </button>
            </div>
          </>
        )}
        {step === 2 && chosen && (
          <form onSubmit={(e) => void confirm(e)} aria-label="Verify and connect">
            <dl className="facts">
              <div>
                <dt>Account</dt>
                <dd>{number(chosen)}</dd>
              </div>
              <div>
                <dt>Environment</dt>
                <dd>
                  <strong>{chosen.environment}</strong>
                </dd>
              </div>
              <div>
                <dt>Broker</dt>
                <dd>{chosen.brokerName ?? '—'}</dd>
              </div>
            </dl>
            {chosen.environment === 'live' && (
              <div className="alert alert-warn" role="alert">
                This is a <strong>live</strong> account: copies will trade real money.
              </div>
            )}
            <label className="inline">
              <input
                type="checkbox"
                name="verified"
                checked={verified}
                onChange={(e) => setVerified(e.target.checked)}
                required
              />{' '}
              I checked the account number and the environment.
            </label>
            <GroupPicker groups={groups.data ?? []} value={place} onChange={setPlace} />
            <ConnectError error={error} />
            <div className="actions">
              <button type="button" className="btn" onClick={() => setStep(1)} disabled={busy}>
                Back
              </button>
              <button type="submit" className="btn btn-primary" disabled={busy || !verified}>
                {busy ? 'Connecting…' : 'Connect this account'}
              </button>
            </div>
          </form>
        )}
        {step === 3 && account && <Connected account={account} onTested={setAccount} />}
      </div>
    </section>
  );
}
