import { useEffect, useState } from 'react';
import { formatWait } from '../api/errors';

/** "Wait 4:12 min": counts down the Retry-After of a 429, then says the action can be tried again. */
export function RetryCountdown({ seconds, what = 'connection requests' }: { seconds: number; what?: string }) {
  const [until] = useState(() => Date.now() + seconds * 1000);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, []);
  const left = Math.max(0, Math.ceil((until - now) / 1000));
  return (
    <div className="alert alert-warn" role="alert">
      {left > 0 ? (
        <>
          The limit of 3 {what} per 5 minutes is reached. Try again in{' '}
          <strong data-testid="retry-wait">{formatWait(left)}</strong>.
        </>
      ) : (
        <>You can try again now.</>
      )}
    </div>
  );
}
