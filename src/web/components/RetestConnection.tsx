import { useState } from 'react';
import { runConnectionTest } from '../api/connect';
import { Alert } from './Alert';

/**
 * For an account whose connection test failed (status unverified): read it at the broker again. A pass makes it
 * connected and assignable; another refusal keeps it unverified with the broker's new words.
 */
export function RetestConnection({ accountId, onDone }: { accountId: string; onDone: () => Promise<void> | void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await runConnectionTest(accountId);
      await onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {' '}
      <button type="button" className="btn" disabled={busy} onClick={run}>
        {busy ? 'Testing…' : 'Test the connection again'}
      </button>
      <Alert error={error} />
    </>
  );
}
