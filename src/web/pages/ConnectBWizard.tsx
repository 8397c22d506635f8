import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/errors';
import { confirmPlatformB, discoverPlatformB, type PlatformBAccount } from '../api/connect';
import type { TestedAccount } from '../api/types';
import { Alert } from '../components/Alert';
import { DemoLogins } from '../components/DemoLogins';
import { ConnectError } from '../components/ConnectError';
import { Connected } from '../components/Connected';
import { GroupPicker, placementBody, type Placement } from '../components/GroupPicker';
import { Steps } from '../components/Steps';
import { useGroups } from '../hooks/useAccounts';
import { money, platformName } from '../lib/format';
import { Link } from '../lib/router';

const STEPS = ['Environment', 'Sign in to the broker', 'Pick and verify the account', 'Connected'];

/** Platform B: Demo or Live, server + email + password; select the returned account and verify its number. */
export function ConnectBWizard() {
  const groups = useGroups();
  const [step, setStep] = useState(0);
  const [environment, setEnvironment] = useState<'demo' | 'live'>('demo');
  const [server, setServer] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [connectionId, setConnectionId] = useState('');
  const [found, setFound] = useState<PlatformBAccount[]>([]);
  const [picked, setPicked] = useState('');
  const [typed, setTyped] = useState('');
  const [place, setPlace] = useState<Placement>({ groupId: '', role: 'slave' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [account, setAccount] = useState<TestedAccount | null>(null);

  const discover = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const r = await discoverPlatformB({ environment, server: server.trim(), email: email.trim(), password });
      setPassword('');
      setConnectionId(r.connectionId);
      setFound(r.accounts);
      setPicked(r.accounts.length === 1 ? r.accounts[0]!.accountId : '');
      setStep(2);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const chosen = found.find((a) => a.accountId === picked);
  const confirm = async (e: FormEvent) => {
    e.preventDefault();
    if (!chosen) return;
    setError(null);
    setBusy(true);
    try {
      setAccount(
        await confirmPlatformB({
          connectionId,
          accountId: chosen.accountId,
          accountNumber: typed.trim(),
          ...placementBody(place),
        }),
      );
      setStep(3);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 400 && /number|match/i.test(err.message)
          ? new Error(`The account number does not match the account you picked: ${err.message}`)
          : err,
      );
    } finally {
      setBusy(false);
    }
  };
  const mismatch = typed.trim() !== '' && chosen && typed.trim() !== String(chosen.accountNumber);

  return (
    <section aria-labelledby="wb-title">
      <p className="crumbs">
        <Link to="/connect">Connect</Link> /
      </p>
      <h1 id="wb-title">Connect a {platformName('platformb')} account</h1>
      <Steps steps={STEPS} current={step} />
      {step === 0 && (
        <DemoLogins
          platform="platformb"
          onUse={(l) => {
            setEnvironment(l.environment === 'live' ? 'live' : 'demo');
            setServer(l.server);
            setEmail(l.email);
            setPassword(l.password);
          }}
        />
      )}
      <div className="card wizard">
        {step === 0 && (
          <>
            <fieldset className="segmented big">
              <legend>Environment</legend>
              {(['demo', 'live'] as const).map((v) => (
                <label key={v}>
                  <input
                    type="radio"
                    name="environment"
                    value={v}
                    checked={environment === v}
                    onChange={() => setEnvironment(v)}
                  />
                  {v === 'demo' ? 'Demo' : 'Live'}
                </label>
              ))}
            </fieldset>
            <div className="actions">
              <button type="button" className="btn btn-primary" onClick={() => setStep(1)}>
                Next
              </button>
            </div>
          </>
        )}
        {step === 1 && (
          <form onSubmit={(e) => void discover(e)} aria-label="Sign in to the broker">
            <p>
              Environment <strong>{environment === 'demo' ? 'Demo' : 'Live'}</strong>
            </p>
            <label>
              Broker server
              <input
                name="server"
                required
                value={server}
                onChange={(e) => setServer(e.target.value)}
                placeholder="the broker's server name"
              />
            </label>
            <label>
              Account email
              <input
                name="email"
                type="email"
                autoComplete="off"
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
            </label>
            <label>
              Password
              <input
                name="password"
                type="password"
                autoComplete="off"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            </label>
            <ConnectError error={error} />
            <div className="actions">
              <button type="button" className="btn" onClick={() => setStep(0)} disabled={busy}>
                Back
              </button>
              <button type="submit" className="btn btn-primary" disabled={busy}>
                {busy ? 'Signing in to the broker…' : 'Find my accounts'}
              </button>
            </div>
          </form>
        )}
        {step === 2 && (
          <form onSubmit={(e) => void confirm(e)} aria-label="Pick and verify the account">
            {found.length === 0 ? (
              <Alert error={new Error('The broker returned no trading account for this login.')} />
            ) : (
              <fieldset className="choices">
                <legend>
                  {found.length > 1
                    ? `The broker returned ${found.length} accounts: select the one to connect`
                    : 'The broker returned this account'}
                </legend>
                {found.map((a) => (
                  <label key={a.accountId}>
                    <input
                      type="radio"
                      name="account"
                      value={a.accountId}
                      checked={picked === a.accountId}
                      onChange={() => {
                        setPicked(a.accountId);
                        setTyped('');
                      }}
                    />{' '}
                    <strong>{a.name}</strong> · #{String(a.accountNumber)} · {a.currency}{' '}
                    {a.balance !== null ? money(Number(a.balance)) : ''}
                  </label>
                ))}
              </fieldset>
            )}
            {chosen && (
              <label>
                Verify: type the account number of the account you selected
                <input
                  name="accountNumber"
                  required
                  value={typed}
                  onChange={(e) => setTyped(e.target.value)}
                  aria-invalid={!!mismatch}
                  autoComplete="off"
                />
                {mismatch && (
                  <span className="bad small" role="alert">
                    This is not the number of the selected account.
                  </span>
                )}
              </label>
            )}
            <GroupPicker groups={groups.data ?? []} value={place} onChange={setPlace} />
            <ConnectError error={error} />
            <div className="actions">
              <button type="button" className="btn" onClick={() => setStep(1)} disabled={busy}>
                Back
              </button>
              <button type="submit" className="btn btn-primary" disabled={busy || !chosen || !typed.trim()}>
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
