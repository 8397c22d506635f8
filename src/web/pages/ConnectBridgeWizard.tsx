import { useEffect, useState, type FormEvent } from 'react';
import { type BridgeCreated, connectPlatformABridge } from '../api/connect';
import { AssignForm } from '../components/AssignForm';
import { BridgeHeartbeat, useBridgeStatus } from '../components/BridgeHeartbeat';
import { ConnectError } from '../components/ConnectError';
import { CopyButton } from '../components/CopyButton';
import { Steps } from '../components/Steps';
import { useGroups } from '../hooks/useAccounts';
import { Link } from '../lib/router';

const STEPS = ['Terminal and account', 'Install the EA', 'Connected', 'Copier group'];
type Terminal = 'mt5' | 'mt4';

/**
 * "MetaTrader, self-hosted": an Expert Advisor in the user's own terminal dials the service (no cloud, no
 * password given to us). Creates the account and its bridge token (shown this once), says where the EA connects
 * and what to allow-list, and turns green when the EA says hello; then the account goes in a copier group (an
 * account joins a group once the service has reached it, here through its EA).
 */
export function ConnectBridgeWizard() {
  const [terminal, setTerminal] = useState<Terminal>('mt5');
  const [server, setServer] = useState('');
  const [login, setLogin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<BridgeCreated | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      setCreated(
        await connectPlatformABridge({
          server: server.trim(),
          login: login.trim(),
        }),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="wm-title">
      <p className="crumbs">
        <Link to="/connect">Connect</Link> /
      </p>
      <h1 id="wm-title">Connect a MetaTrader account, self-hosted</h1>
      <p className="muted">
        An Expert Advisor in your own terminal connects out to this service: no cloud subscription, no inbound port, and
        your trading password stays in the terminal.
      </p>
      {created ? (
        <Install created={created} terminal={terminal} />
      ) : (
        <>
          <Steps steps={STEPS} current={0} />
          <form className="card wizard" onSubmit={(e) => void create(e)} aria-label="Terminal and account">
            <fieldset className="segmented">
              <legend>Terminal</legend>
              {(['mt5', 'mt4'] as const).map((t) => (
                <label key={t}>
                  <input
                    type="radio"
                    name="terminal"
                    value={t}
                    checked={terminal === t}
                    onChange={() => setTerminal(t)}
                  />
                  {t.toUpperCase()}
                </label>
              ))}
            </fieldset>
            <label>
              Broker server (as the terminal shows it)
              <input name="server" required value={server} onChange={(e) => setServer(e.target.value)} />
            </label>
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
            <ConnectError error={error} />
            <div className="actions">
              <button type="submit" className="btn btn-primary" disabled={busy}>
                {busy ? 'Creating…' : 'Create the account and its token'}
              </button>
            </div>
          </form>
        </>
      )}
    </section>
  );
}

/** Steps two and three: the token (this once) and the EA's settings, then green when the EA has said hello. */
function Install({ created, terminal }: { created: BridgeCreated; terminal: Terminal }) {
  const groups = useGroups();
  const [account, setAccount] = useState(created.account);
  const status = useBridgeStatus(created.account.id, 2000);
  const live = status && status !== 'none' ? status.status : null;
  const connected = live?.connected ?? false;
  const [shown, setShown] = useState(true);
  useEffect(() => {
    if (connected) setShown(false);
  }, [connected]);
  const url = terminal === 'mt5' ? created.bridge.url : created.bridge.pollUrl;
  const file = terminal === 'mt5' ? 'CopytradeBridge.mq5' : 'CopytradeBridge.mq4';
  const folder = terminal === 'mt5' ? 'MQL5/Experts' : 'MQL4/Experts';
  return (
    <>
      <Steps steps={STEPS} current={account.groupId ? 4 : connected ? 3 : 1} />
      <div className="card wizard">
        {shown && (
          <div className="alert alert-good secret" role="status">
            Bridge token of {created.account.name}, shown this once (only its hash is kept):
            <div className="secret-row">
              <code data-testid="bridge-token">{created.token.token}</code>
              <CopyButton value={created.token.token} />
            </div>
          </div>
        )}
        <ol className="install-steps">
          <li>
            Copy <code>ea/{file}</code> from the copytrade sources into your terminal's <code>{folder}</code> folder and
            compile it in MetaEditor (F7).
          </li>
          <li>
            In the terminal, Tools &gt; Options &gt; Expert Advisors: allow algorithmic trading, and add{' '}
            <code data-testid="bridge-allow">{created.bridge.allowList}</code> to "Allow WebRequest for listed URL"{' '}
            <CopyButton value={created.bridge.allowList} />
          </li>
          <li>
            Attach the EA to any chart of account {created.account.accountNumber}. Inputs: <code>BridgeUrl</code> ={' '}
            <code data-testid="bridge-url">{url}</code> <CopyButton value={url} />, <code>BridgeToken</code> = the token
            above.
          </li>
        </ol>
        {live?.connected ? (
          <>
            <div className="alert alert-good" role="status" data-testid="bridge-connected">
              Connected: the EA ({live.ea}, terminal build {live.terminalBuild}, {live.marginMode}) said hello.{' '}
              <Link to={`/accounts/${created.account.id}`}>Open the account</Link>
              <BridgeHeartbeat status={live} currency={created.account.currency} />
            </div>
            <h2>Assign it to a copier group</h2>
            <AssignForm account={account} groups={groups.data ?? []} onSaved={setAccount} compact />
          </>
        ) : (
          <div role="status" aria-live="polite">
            <progress aria-label="Waiting for the EA" />
            <p>Waiting for the EA's hello… This page turns green when it connects.</p>
          </div>
        )}
      </div>
    </>
  );
}
