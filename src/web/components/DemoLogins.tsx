import { demoLogins, type DemoLogins as Logins } from '../api/actions';
import { useQuery } from '../hooks/useQuery';

type Platform = keyof Logins;

/**
 * Demo mode only: the simulated brokers' logins of the accounts the demo keeps free, so the wizard can connect
 * one. Renders nothing on a real deployment (the route is not served there).
 */
export function DemoLogins<P extends Platform>({
  platform,
  onUse,
}: {
  platform: P;
  onUse?: (login: Logins[P][number]) => void;
}) {
  const logins = useQuery(demoLogins, []);
  const list = (logins.data?.[platform] ?? []) as Array<Logins[P][number]>;
  if (list.length === 0) return null;
  return (
    <aside
      className="alert alert-info demo-logins"
      aria-label="Simulated accounts you can connect"
      data-testid="demo-logins"
    >
      <strong>Demo mode: simulated broker accounts you can connect</strong>
      <ul>
        {list.map((l) => {
          const x = l as Record<string, string>;
          const text =
            platform === 'platforma'
              ? `${x.platform!.toUpperCase()} server ${x.server}, login ${x.login}, trading password ${x.password}`
              : platform === 'platformb'
                ? `${x.environment} server ${x.server}, email ${x.email}, password ${x.password} (account #${x.accountNumber})`
                : platform === 'platformd'
                  ? `${x.environment} server ${x.server}, username ${x.username}, domain ${x.domain}, password ${x.password} (account ${x.account})`
                  : `on the authorization page sign in as ${x.ctidUser}, then pick account #${x.accountNumber}`;
          return (
            <li key={x.login ?? x.accountNumber ?? x.account}>
              <code>{text}</code> <span className="muted small">balance {x.balance}</span>
              {onUse && (
                <>
                  {' '}
                  <button type="button" className="btn btn-small" onClick={() => onUse(l)}>
                    Use
                  </button>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </aside>
  );
}
