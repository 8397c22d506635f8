import { humanize } from './names';

/** Ledger reason codes in words; the code itself stays in the cell's title for whoever greps logs. */
const WORDS: Record<string, string> = {
  unknown_symbol: 'symbol not at the Slave broker',
  volume_below_minimum: 'volume below the broker minimum',
  missing_account_data: 'no balance or equity known yet',
  slave_not_eligible: 'Slave not copying',
  master_not_eligible: 'Master not copying',
  pending_orders_off: 'pending orders not copied',
  stale_action: 'too late to copy',
  not_supported: 'not supported by the Slave broker',
  no_linked_position: 'no copy to follow',
  closed_before_copy: 'Master closed it before it could be copied',
  already_closed_by_panic: 'already closed by a panic-close',
  broker_unavailable: 'Slave broker unavailable',
  no_stop_loss: 'no stop loss to size by',
  slippage_exceeded: 'price moved more than allowed',
  slippage_unknown: 'no price to check slippage',
  rounded_to_full_close: 'closed in full',
  risk_daily_loss: 'daily loss limit',
  risk_max_open_volume: 'open volume limit',
  rate_limited: 'broker rate limit',
  broker_auth_failed: 'broker refused the credentials',
  not_at_broker: 'not found at the broker',
};

export function describeReason(raw: string): { text: string; code: string | null } {
  const m = /^([a-z][a-z0-9_]+)(?::\s*|;\s*|$)(.*)$/s.exec(raw);
  if (!m || !WORDS[m[1]!]) return { text: humanize(raw), code: null };
  const detail = m[2] ? humanize(m[2]) : '';
  return { text: detail ? `${WORDS[m[1]!]}: ${detail}` : WORDS[m[1]!]!, code: m[1]! };
}
