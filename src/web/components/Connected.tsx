import type { Account } from '../api/types';
import { money, platformName } from '../lib/format';
import { Link } from '../lib/router';
import { Badge } from './Badge';

/** The last step of every wizard: the account as the service now holds it. */
export function Connected({ account }: { account: Account }) {
  return (
    <div className="alert alert-good" role="status" data-testid="connected">
      <strong>Connected: {account.name}</strong> ({platformName(account.platform)}, account {account.accountNumber}
      {account.environment ? `, ${account.environment}` : ''}) — <Badge value={account.status} />{' '}
      <Badge value={account.role} />
      {account.balance !== null ? ` balance ${money(account.balance, account.currency)}` : ''}.
      <p>
        <Link to={`/accounts/${account.id}`}>Open the account</Link> · <Link to="/groups">Copier groups</Link> ·{' '}
        <Link to="/connect">Connect another</Link>
      </p>
    </div>
  );
}
