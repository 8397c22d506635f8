import { useState, type FormEvent } from 'react';
import { confirmPlatformD, discoverPlatformD, type PlatformDAccount } from '../api/connect';
import type { TestedAccount } from '../api/types';
import { Alert } from '../components/Alert';
import { ConnectError } from '../components/ConnectError';
import { Connected } from '../components/Connected';
import { DemoLogins } from '../components/DemoLogins';
import { GroupPicker, placementBody, type Placement } from '../components/GroupPicker';
import { Steps } from '../components/Steps';
import { useGroups } from '../hooks/useAccounts';
import { money, platformName } from '../lib/format';
import { Link } from '../lib/router';

const STEPS = ['Environment', 'Log in to DXtrade', 'Pick the account', 'Connected'];

/** Platform D (DXtrade): Demo or Live, the broker's server, username, domain and password; pick the account. */
export function ConnectDWizard() {
  const groups = useGroups();
  const [step, setStep] = useState(0);
  const [environment, setEnvironment] = useState<'demo' | 'live'>('demo');
  const [server, setServer] = useState('');
  const [username, setUsername] = useState('');
  const [domain, setDomain] = useState('default');
  const [password, setPassword] = useState('');
  const [connectionId, setConnectionId] = useState('');
  const [found, setFound] = useState<PlatformDAccount[]>([]);
  const [picked, setPicked] = useState('');
  const [place, setPlace] = useState<Placement>({ groupId: '', role: 'slave' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [account, setAccount] = useState<TestedAccount | null>(null);

  const run = async (work: () => Promise<void>) => {
    setError(null);
    setBusy(true);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const discover = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const r = await discoverPlatformD({
        environment,
        server: server.trim(),
        username: username.trim(),
        domain: domain.trim() || 'default',
        password,
      });
      setPassword('');
      setConnectionId(r.connectionId);
      setFound(r.accounts);
      setPicked(r.accounts.length === 1 ? r.accounts[0]!.account : '');
      setStep(2);
    });
  };
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    if (!picked) return;
    void run(async () => {
      setAccount(await confirmPlatformD({ connectionId, account: picked, ...placementBody(place) }));
      setStep(3);
    });
  };

  return (
    <section aria-labelledby="wd-title">
      <p className="crumbs">
        <Link to="/connect">Connect</Link> /
      </p>
      <h1 id="wd-title">Connect a {platformName('platformd')} account</h1>
      <Steps steps={STEPS} current={step} />
      {step === 0 && (
        <DemoLogins
          platform="platformd"
          onUse={(l) => {
            setEnvironment(l.environment === 'live' ? 'live' : 'demo');
            setServer(l.server);
            setUsername(l.username);
            setDomain(l.domain);
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
          <form onSubmit={discover} aria-label="Log in to DXtrade">
            <p>
              Environment <strong>{environment === 'demo' ? 'Demo' : 'Live'}</strong>
            </p>
            <label>
              DXtrade server
              <input
                name="server"
                required
                value={server}
                onChange={(e) => setServer(e.target.value)}
                placeholder="the address you trade at, e.g. trade.yourbroker.com"
              />
            </label>
            <label>
              Username
              <input
                name="username"
                autoComplete="off"
                required
                value={username}
                onChange={(e) => setUsername(e.target.value)}
              />
            </label>
            <label>
              Domain
              <input name="domain" autoComplete="off" value={domain} onChange={(e) => setDomain(e.target.value)} />
              <span className="muted small">Your broker tells you if it is not “default”.</span>
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
                {busy ? 'Logging in to DXtrade…' : 'Find my accounts'}
              </button>
            </div>
          </form>
        )}
        {step === 2 && (
          <form onSubmit={confirm} aria-label="Pick the account">
            {found.length === 0 ? (
              <Alert error={new Error('DXtrade returned no trading account for this login.')} />
            ) : (
              <fieldset className="choices">
                <legend>
                  {found.length > 1
                    ? `DXtrade returned ${found.length} accounts: select the one to connect`
                    : 'DXtrade returned this account'}
                </legend>
                {found.map((a) => (
                  <label key={a.account}>
                    <input
                      type="radio"
                      name="account"
                      value={a.account}
                      checked={picked === a.account}
                      onChange={() => setPicked(a.account)}
                    />{' '}
                    <strong>{a.account}</strong> · {a.currency} {money(Number(a.balance))} ·{' '}
                    {a.hedging ? 'hedging' : 'netting (no SL/TP on copies)'}
                  </label>
                ))}
              </fieldset>
            )}
            <GroupPicker groups={groups.data ?? []} value={place} onChange={setPlace} />
            <ConnectError error={error} />
            <div className="actions">
              <button type="button" className="btn" onClick={() => setStep(1)} disabled={busy}>
                Back
              </button>
              <button type="submit" className="btn btn-primary" disabled={busy || !picked}>
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
