import { useEffect, useState } from 'react';
import { type BridgeStatus, platformABridgeStatus } from '../api/connect';
import { ago, money } from '../lib/format';

/** Asks the bridge status every `everyMs` while mounted; null until known, `none` for an account not on the bridge. */
export function useBridgeStatus(accountId: string, everyMs = 3000): BridgeStatus | 'none' | null {
  const [status, setStatus] = useState<BridgeStatus | 'none' | null>(null);
  useEffect(() => {
    let live = true;
    let timer = 0;
    const load = async () => {
      try {
        const s = await platformABridgeStatus(accountId);
        if (!live) return;
        setStatus(s);
        timer = window.setTimeout(() => void load(), everyMs);
      } catch {
        // Not a bridge account (404), or the service is away: nothing to show.
        if (live) setStatus((prev) => (prev && prev !== 'none' ? prev : 'none'));
      }
    };
    void load();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [accountId, everyMs]);
  return status;
}

/** What the terminal's EA last said: connected or silent, its heartbeat's funds and trading permission, and when. */
export function BridgeHeartbeat({ status, currency }: { status: BridgeStatus['status']; currency: string | null }) {
  const state = !status.connected ? 'not connected' : status.silent ? 'silent' : 'connected';
  const allowed = status.tradeAllowed === null ? '-' : status.tradeAllowed ? 'yes' : 'no';
  return (
    <dl className="facts" data-testid="bridge-heartbeat" aria-label="Terminal EA">
      <div>
        <dt>Terminal EA</dt>
        <dd className={state === 'connected' ? 'good' : 'bad'}>
          {state}
          {status.ea && <span className="muted small"> {status.ea}</span>}
          {status.silent && (
            <span className="muted small">
              {' '}
              no heartbeat for {status.silentAfterSec} s: the account is disconnected
            </span>
          )}
        </dd>
      </div>
      <div>
        <dt>Last heartbeat</dt>
        <dd>{status.lastSeenAt ? ago(status.lastSeenAt) : 'none yet'}</dd>
      </div>
      <div>
        <dt>EA balance / equity</dt>
        <dd>
          {status.balance === null ? '-' : money(Number(status.balance), currency)} /{' '}
          {status.equity === null ? '-' : money(Number(status.equity), currency)}
        </dd>
      </div>
      <div>
        <dt>Trading allowed in the terminal</dt>
        <dd>{allowed}</dd>
      </div>
    </dl>
  );
}

/** On an account's page: the EA's heartbeat, for an account connected through the bridge (nothing otherwise). */
export function AccountBridge({ accountId, currency }: { accountId: string; currency: string | null }) {
  const status = useBridgeStatus(accountId);
  if (!status || status === 'none') return null;
  return (
    <section className="card" aria-labelledby="bridge-title">
      <h2 id="bridge-title">Terminal bridge</h2>
      <BridgeHeartbeat status={status.status} currency={currency} />
    </section>
  );
}
