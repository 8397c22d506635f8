import { useEffect, useState, type FormEvent } from 'react';
import { connectPlatformA, searchPlatformAServers, type MtPlatform, type PlatformAServerGroup } from '../api/connect';
import type { TestedAccount } from '../api/types';
import { AssignForm } from '../components/AssignForm';
import { ConnectError } from '../components/ConnectError';
import { Connected } from '../components/Connected';
import { DemoLogins } from '../components/DemoLogins';
import { Steps } from '../components/Steps';
import { useGroups } from '../hooks/useAccounts';
import { platformName } from '../lib/format';
import { Link } from '../lib/router';

const STEPS = ['Terminal and broker server', 'Login', 'Confirm', 'Copier group'];
interface ServerChoice {
  name: string;
  broker: string;
}
/** MetaApi's search answers groups {broker, servers}: one radio per server, labelled with its broker. */
const flatten = (groups: PlatformAServerGroup[]): ServerChoice[] =>
  groups.flatMap((g) => g.servers.map((name) => ({ name, broker: g.broker })));

/** Platform A (MT4/MT5): search the broker server, login ID and trading password, confirm, then assign to a group. */
export function ConnectAWizard() {
  const groups = useGroups();
  const [step, setStep] = useState(0);
  const [query, setQuery] = useState('');
  const [servers, setServers] = useState<ServerChoice[] | null>(null);
  const [server, setServer] = useState('');
  const [platform, setPlatform] = useState<MtPlatform>('mt5');
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [started, setStarted] = useState(0);
  const [now, setNow] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [account, setAccount] = useState<TestedAccount | null>(null);

  useEffect(() => {
    if (!busy) return;
    const t = window.setInterval(() => setNow(Date.now()), 500);
    return () => window.clearInterval(t);
  }, [busy]);

  const search = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const found = flatten((await searchPlatformAServers(query.trim(), platform)).servers);
      setServers(found);
      setServer(found.length === 1 ? found[0]!.name : '');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const connect = async () => {
    setError(null);
    setBusy(true);
    setStarted(Date.now());
    setNow(Date.now());
    try {
      setAccount(await connectPlatformA({ server, login: login.trim(), password, platform }));
      setPassword('');
      setStep(3);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="wa-title">
      <p className="crumbs">
        <Link to="/connect">Connect</Link> /
      </p>
      <h1 id="wa-title">Connect a {platformName('platforma')} account</h1>
      <Steps steps={STEPS} current={step} />
      {step === 0 && (
        <DemoLogins
          platform="platforma"
          onUse={(l) => {
            setPlatform(l.platform === 'mt4' ? 'mt4' : 'mt5');
            setQuery(l.server);
            setLogin(l.login);
            setPassword(l.password);
          }}
        />
      )}
      <div className="card wizard">
        {step === 0 && (
          <>
            <fieldset className="segmented">
              <legend>Terminal</legend>
              {(['mt4', 'mt5'] as const).map((p) => (
                <label key={p}>
                  <input
                    type="radio"
                    name="platform"
                    value={p}
                    checked={platform === p}
                    onChange={() => {
                      setPlatform(p);
                      setServers(null);
                      setServer('');
                    }}
                  />
                  {p.toUpperCase()}
                </label>
              ))}
            </fieldset>
            <form className="inline-form" onSubmit={(e) => void search(e)} role="search" aria-label="Server search">
              <label htmlFor="srv-q">Broker server</label>
              <input
                id="srv-q"
                value={query}
                onChange={(e) => setQuery(e.target.value)}
                placeholder="broker name or server, e.g. Demo"
              />
              <button type="submit" className="btn" disabled={busy}>
                {busy ? 'Searching…' : 'Search'}
              </button>
            </form>
            {servers &&
              (servers.length === 0 ? (
                <p className="muted">No server matches: try another part of the broker's name.</p>
              ) : (
                <fieldset className="choices">
                  <legend>Servers found</legend>
                  {servers.map((c) => (
                    <label key={c.name}>
                      <input
                        type="radio"
                        name="server"
                        value={c.name}
                        checked={server === c.name}
                        onChange={() => setServer(c.name)}
                      />{' '}
                      {c.name}
                      <span className="muted small"> · {c.broker}</span>
                    </label>
                  ))}
                </fieldset>
              ))}
            <ConnectError error={error} />
            <div className="actions">
              <button
                type="button"
                className="btn btn-primary"
                disabled={!server}
                onClick={() => {
                  setError(null);
                  setStep(1);
                }}
              >
                Next
              </button>
            </div>
          </>
        )}
        {step === 1 && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setStep(2);
            }}
            aria-label="Login"
          >
            <p>
              {platform.toUpperCase()} server <strong>{server}</strong>
            </p>
            <label>
              Login ID
              <input
                name="login"
                inputMode="numeric"
                autoComplete="off"
                required
                value={login}
                onChange={(e) => setLogin(e.target.value)}
              />
            </label>
            <label>
              Trading password (not the investor password)
              <input
                name="password"
                type="password"
                autoComplete="off"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            </label>
            <div className="actions">
              <button type="button" className="btn" onClick={() => setStep(0)}>
                Back
              </button>
              <button type="submit" className="btn btn-primary">
                Next
              </button>
            </div>
          </form>
        )}
        {step === 2 && (
          <>
            <dl className="facts">
              <div>
                <dt>Server</dt>
                <dd>{server}</dd>
              </div>
              <div>
                <dt>Terminal</dt>
                <dd>{platform.toUpperCase()}</dd>
              </div>
              <div>
                <dt>Login ID</dt>
                <dd>{login}</dd>
              </div>
            </dl>
            {busy && (
              <div role="status" aria-live="polite">
                <progress aria-label="Connecting" />
                <p>
                  Connecting to {server}… {Math.max(0, Math.round((now - started) / 1000))} s. The broker can take a
                  while to answer.
                </p>
              </div>
            )}
            <ConnectError error={error} />
            <div className="actions">
              <button type="button" className="btn" disabled={busy} onClick={() => setStep(1)}>
                Back
              </button>
              <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void connect()}>
                {busy ? 'Connecting…' : 'Connect'}
              </button>
            </div>
          </>
        )}
        {step === 3 && account && (
          <>
            <Connected account={account} onTested={setAccount} />
            <h2>Assign it to a copier group</h2>
            <AssignForm
              account={account}
              groups={groups.data ?? []}
              onSaved={(a) => setAccount((prev) => ({ ...a, connectionTest: prev?.connectionTest ?? null }))}
              compact
            />
          </>
        )}
      </div>
    </section>
  );
}
