import type { Health } from '../api/types';
import { Badge } from './Badge';

/** The account's health state, with what is wrong spelled out in the tooltip and for screen readers. */
export function HealthBadge({ health }: { health: Health }) {
  const issues = [
    !health.connected && 'not connected',
    !health.tradingAllowed && 'trading not allowed',
    !health.inSync && 'out of sync',
    health.dataStale && 'data stale',
    health.reconnectRequired && 'reconnect required',
    health.lastError,
  ].filter(Boolean) as string[];
  return (
    <span>
      <Badge value={health.state} title={issues.length ? issues.join('; ') : 'all checks pass'} />
      {issues.length > 0 && <span className="sr-only">: {issues.join('; ')}</span>}
    </span>
  );
}
