import { useState } from 'react';
import { removeAccount } from '../api/actions';
import { ApiError } from '../api/errors';
import type { Account } from '../api/types';
import { navigate } from '../lib/router';
import { Alert } from './Alert';
import { Modal } from './Modal';

/** Remove an account: its stored broker credentials go with it, its history stays; open copies make the service ask first. */
export function RemoveAccountDialog({ account, onClose }: { account: Account; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const blocked = error instanceof ApiError && error.code === 'open_copies';
  const run = async (force: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await removeAccount(account.id, force);
      navigate('/');
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Modal title={`Remove ${account.name}`} onClose={onClose} busy={busy}>
      <p>
        This removes the account from copytrade with its stored broker credentials, copy rule and risk limits.
        {account.role === 'master'
          ? ' The trades it led and their copy ledger stay in Trades.'
          : ' Its copy ledger stays in Trades.'}{' '}
        Nothing is closed at the broker.
      </p>
      <Alert error={error} />
      <div className="actions">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        {blocked ? (
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void run(true)}>
            Remove anyway, leave the copies open
          </button>
        ) : (
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void run(false)}>
            Remove account
          </button>
        )}
      </div>
    </Modal>
  );
}
