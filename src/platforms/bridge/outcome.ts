import { dec } from '../../domain/decimal.js';
import { confirmed, denied, type OrderOutcome, rejected, retryLater, unresolved } from '../adapter.js';
import { isSuccess, RETCODE, retcodeName } from '../../protocols/bridge/retcodes.js';
import type { NoReply, Reply } from './link.js';

const CODES: Record<number, string> = {
  [RETCODE.REQUOTE]: 'requote',
  [RETCODE.PRICE_CHANGED]: 'requote',
  [RETCODE.PRICE_OFF]: 'requote',
  [RETCODE.REJECT]: 'rejected',
  [RETCODE.CANCEL]: 'rejected',
  [RETCODE.INVALID]: 'invalid_request',
  [RETCODE.INVALID_VOLUME]: 'invalid_volume',
  [RETCODE.INVALID_PRICE]: 'invalid_price',
  [RETCODE.INVALID_STOPS]: 'invalid_stops',
  [RETCODE.TRADE_DISABLED]: 'trade_disabled',
  [RETCODE.MARKET_CLOSED]: 'market_closed',
  [RETCODE.NO_MONEY]: 'not_enough_money',
  [RETCODE.TOO_MANY_REQUESTS]: 'rate_limited',
  [RETCODE.POSITION_CLOSED]: 'position_not_found',
};

/**
 * An EA's answer to a command as the port's outcome. What may have been applied is `unresolved` (no answer in
 * time, the connection dropped in the middle, a terminal timeout retcode): the tag settles it, never a blind
 * resend. Nothing sent (no EA connected) is `denied` to send again later.
 */
export function outcomeOf(r: Reply | NoReply): OrderOutcome {
  if ('none' in r) {
    if (r.none === 'not_connected') {
      const d = denied('upstream_unavailable', 'the terminal bridge EA is not connected; nothing was sent');
      d.retry = retryLater(null);
      return d;
    }
    return unresolved(
      'write_outcome_unknown',
      r.none === 'timeout'
        ? 'the EA did not answer in time; the outcome is settled by the tag'
        : 'the EA disconnected in the middle of the command; the outcome is settled by the tag',
    );
  }
  if (r.type !== 'ack') return unresolved('write_outcome_unknown', `the EA answered a command with ${r.type}`);
  if (r.retcode === RETCODE.TIMEOUT || r.retcode === RETCODE.ERROR)
    return unresolved('write_outcome_unknown', `${retcodeName(r.retcode)}: ${r.message}`);
  if (isSuccess(r.retcode))
    return confirmed({
      brokerOrderId: r.order,
      positionId: r.position,
      filledVolume: r.volume === null ? null : dec(r.volume),
      fillPrice: r.price === null ? null : dec(r.price),
      brokerTime: new Date(r.time).toISOString(),
      raw: { retcode: r.retcode, deal: r.deal, repeated: r.repeated },
    });
  const code = CODES[r.retcode] ?? 'rejected';
  return rejected(
    code,
    `${retcodeName(r.retcode)}: ${r.message}`,
    { retcode: r.retcode },
    r.retcode === RETCODE.TOO_MANY_REQUESTS ? retryLater(r.retryAfterSec) : undefined,
  );
}
