import { AppError } from '../../domain/errors.js';
import { SimError, type SimErrorCode } from '../../simulator/contract.js';
import type { RejectedOutcome } from '../adapter.js';
import { rejected } from '../adapter.js';

/** Rejection codes the sim adapter reports; the ledger stores them as the broker's answer. */
export const SIM_REJECT_CODES: Record<SimErrorCode, string> = {
  UNKNOWN_ACCOUNT: 'unknown_account',
  UNKNOWN_SYMBOL: 'unknown_symbol',
  INVALID_VOLUME: 'invalid_volume',
  INVALID_PRICE: 'invalid_price',
  INVALID_STOPS: 'invalid_stops',
  NOT_ENOUGH_MONEY: 'not_enough_money',
  POSITION_NOT_FOUND: 'position_not_found',
  ORDER_NOT_FOUND: 'order_not_found',
  MARKET_CLOSED: 'market_closed',
  REJECTED: 'rejected',
};

const NOT_FOUND: ReadonlySet<SimErrorCode> = new Set([
  'UNKNOWN_ACCOUNT',
  'UNKNOWN_SYMBOL',
  'POSITION_NOT_FOUND',
  'ORDER_NOT_FOUND',
]);
const INVALID: ReadonlySet<SimErrorCode> = new Set(['INVALID_VOLUME', 'INVALID_PRICE', 'INVALID_STOPS']);

/** Duck-typed as well, because another SimBrokerApi implementation may throw its own class with the same shape. */
export function isSimError(err: unknown): err is SimError {
  return (
    err instanceof SimError ||
    (err instanceof Error && err.name === 'SimError' && typeof (err as { code?: unknown }).code === 'string')
  );
}

export function simErrorToRejected(err: SimError): RejectedOutcome {
  return rejected(SIM_REJECT_CODES[err.code] ?? 'rejected', err.message, { code: err.code });
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (!isSimError(err))
    return new AppError('internal_error', err instanceof Error ? err.message : String(err), { cause: err });
  const details = { simCode: err.code };
  if (NOT_FOUND.has(err.code)) return new AppError('not_found', err.message, { cause: err, details });
  if (INVALID.has(err.code)) return new AppError('invalid_request', err.message, { cause: err, details });
  return new AppError('upstream_error', err.message, { cause: err, details });
}
