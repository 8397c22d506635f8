import { useState } from 'react';
import { runConnectionTest } from '../api/connect';
import type { ConnectionTest, TestedAccount } from '../api/types';
import { money, platformName } from '../lib/format';
import { Link } from '../lib/router';
import { Alert } from './Alert';
import { Badge } from './Badge';

/** What the connection test read at the broker: funds, symbols, open positions and orders, trading allowed. */
function TestResult({ test, currency }: { test: ConnectionTest; currency: string | null }) {
  const allowed = test.tradingAllowed === null ? 'not reported' : test.tradingAllowed ? 'yes' : 'no';
  return (
    <ul data-testid="connection-test">
      <li>balance {test.balance === null ? '-' : money(test.balance, test.currency ?? currency)}</li>
      <li>equity {test.equity === null ? '-' : money(test.equity, test.currency ?? currency)}</li>
      <li>symbols {test.symbols ?? 'not listed by this platform'}</li>
      <li>open positions {test.positions ?? '-'}</li>
      <li>pending orders {test.orders ?? '-'}</li>
      <li>trading allowed {allowed}</li>
    </ul>
  );
}

/**
 * The last step of every wizard: the account as the service now holds it, and its connection test. An account
 * whose test failed is not in any group and cannot be put in one until a test passes: the broker's words say why.
 */
export function Connected({ account, onTested }: { account: TestedAccount; onTested?: (a: TestedAccount) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const test = account.connectionTest;
  const failed = test !== null && test !== undefined && !test.ok;
  const again = async () => {
    setBusy(true);
    setError(null);
    try {
      onTested?.(await runConnectionTest(account.id));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className={`alert ${failed ? 'alert-bad' : 'alert-good'}`} role="status" data-testid="connected">
      <strong>
        {failed ? 'Connected, but the connection test failed' : 'Connected'}: {account.name}
      </strong>{' '}
      ({platformName(account.platform)}, account {account.accountNumber}
      {account.environment ? `, ${account.environment}` : ''}) — <Badge value={account.status} />{' '}
      <Badge value={account.role} />
      {!test && account.balance !== null ? ` balance ${money(account.balance, account.currency)}` : ''}.
      {test && <TestResult test={test} currency={account.currency} />}
      {failed && (
        <p data-testid="connection-test-error">
          The broker refused {test.failedRead ? `the ${test.failedRead} read` : 'trading'}: {test.error}. The account is
          in no copier group and cannot be put in one until a test passes.{' '}
          <button type="button" className="btn" disabled={busy} onClick={again}>
            {busy ? 'Testing…' : 'Test again'}
          </button>
        </p>
      )}
      <Alert error={error} />
      <p>
        <Link to={`/accounts/${account.id}`}>Open the account</Link> · <Link to="/groups">Copier groups</Link> ·{' '}
        <Link to="/connect">Connect another</Link>
      </p>
    </div>
  );
}
