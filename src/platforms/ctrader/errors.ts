import { AppError } from '../../domain/errors.js';
import type { OrderOutcome } from '../adapter.js';
import type { Envelope } from '../../protocols/ctrader/messages.js';
import { denied, rejected, retryLater, unresolved } from '../adapter.js';

/**
 * Open API failures -> our error tree (reads) and outcome kinds (writes). Error codes arrive as enum names in
 * strings (fact sheet §4.2, §5); the grouping follows the fact sheet's copier handling table.
 */

/** The server refused: ProtoOAErrorRes / ProtoErrorRes, ProtoOAOrderErrorEvent, or an ORDER_REJECTED event. */
export class OpenApiError extends Error {
  constructor(
    readonly errorCode: string,
    description: string,
    readonly source: 'error_res' | 'order_error_event' | 'execution_rejected',
    readonly retryAfter?: number,
  ) {
    super(description ? `${errorCode}: ${description}` : errorCode);
    this.name = 'OpenApiError';
  }
}

/** No answer in time; `collected` holds what did arrive for the request (e.g. ORDER_ACCEPTED without a fill). */
export class RequestTimeoutError extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly collected: Envelope[],
  ) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** The connection dropped after the request was written: it may have been applied. */
export class ConnectionLostError extends Error {
  constructor(
    reason: string,
    readonly collected: Envelope[],
  ) {
    super(`connection lost: ${reason}`);
    this.name = 'ConnectionLostError';
  }
}

/** Nothing was written: no connection, or the account could not be authorised. */
export class NotSentError extends Error {
  constructor(
    message: string,
    readonly appError: AppError,
  ) {
    super(message);
    this.name = 'NotSentError';
  }
}

export const TOKEN_CODES: ReadonlySet<string> = new Set(['CH_ACCESS_TOKEN_INVALID', 'OA_AUTH_TOKEN_EXPIRED']);
const RATE_CODES: ReadonlySet<string> = new Set(['BLOCKED_PAYLOAD_TYPE', 'REQUEST_FREQUENCY_EXCEEDED']);
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'CANT_ROUTE_REQUEST',
  'CH_SERVER_NOT_REACHABLE',
  'SERVER_IS_UNDER_MAINTENANCE',
  'CONNECTIONS_LIMIT_EXCEEDED',
  'ACCOUNT_NOT_AUTHORIZED',
  'CH_CLIENT_NOT_AUTHENTICATED',
  'UNKNOWN_ERROR',
  'CONCURRENT_MODIFICATION',
  'PENDING_EXECUTION',
]);
const NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'ENTITY_NOT_FOUND',
  'POSITION_NOT_FOUND',
  'ORDER_NOT_FOUND',
  'SYMBOL_NOT_FOUND',
  'UNKNOWN_SYMBOL',
  'CH_CTID_TRADER_ACCOUNT_NOT_FOUND',
  'RET_NO_SUCH_LOGIN',
]);
const INVALID_CODES: ReadonlySet<string> = new Set([
  'INVALID_REQUEST',
  'UNSUPPORTED_MESSAGE',
  'FRAME_TOO_LONG',
  'INCORRECT_BOUNDARIES',
  'TRADING_BAD_VOLUME',
  'TRADING_BAD_STOPS',
  'TRADING_BAD_PRICES',
  'TRADING_BAD_STAKE',
  'TRADING_BAD_EXPIRATION_DATE',
  'PROTECTION_IS_TOO_CLOSE_TO_MARKET',
]);
const CONFIG_CODES: ReadonlySet<string> = new Set(['CH_CLIENT_AUTH_FAILURE', 'CH_OA_CLIENT_NOT_FOUND']);
/**
 * Refusals of a request that say "not now, later" (the fact sheet's back-off group, and PENDING_EXECUTION: an order
 * on the position is executing), answered to the request itself (an error response): the request went nowhere.
 */
const LATER_CODES: ReadonlySet<string> = new Set([
  'CANT_ROUTE_REQUEST',
  'CH_SERVER_NOT_REACHABLE',
  'SERVER_IS_UNDER_MAINTENANCE',
  'PENDING_EXECUTION',
]);

/** Business rejections, named like the sim adapter's so the ledger reads the same across platforms. */
const REJECT_CODES: Record<string, string> = {
  TRADING_BAD_VOLUME: 'invalid_volume',
  TRADING_BAD_STOPS: 'invalid_stops',
  PROTECTION_IS_TOO_CLOSE_TO_MARKET: 'invalid_stops',
  TRADING_BAD_PRICES: 'invalid_price',
  NOT_ENOUGH_MONEY: 'not_enough_money',
  POSITION_NOT_FOUND: 'position_not_found',
  POSITION_NOT_OPEN: 'position_not_found',
  ORDER_NOT_FOUND: 'order_not_found',
  SYMBOL_NOT_FOUND: 'unknown_symbol',
  UNKNOWN_SYMBOL: 'unknown_symbol',
  MARKET_CLOSED: 'market_closed',
  SYMBOL_HAS_HOLIDAY: 'market_closed',
  TRADING_DISABLED: 'rejected',
  TRADING_NOT_ALLOWED: 'trading_not_allowed',
};

export function mapOpenApiError(err: OpenApiError, what: string): AppError {
  const details = { errorCode: err.errorCode, source: err.source };
  const msg = `${what}: ${err.message}`;
  if (TOKEN_CODES.has(err.errorCode)) return new AppError('reconnect_required', msg, { cause: err, details });
  if (RATE_CODES.has(err.errorCode)) {
    return new AppError('rate_limited', msg, { cause: err, details, retryable: true, retryAfter: err.retryAfter ?? 1 });
  }
  if (UNAVAILABLE_CODES.has(err.errorCode))
    return new AppError('upstream_unavailable', msg, { cause: err, details, retryable: true });
  if (NOT_FOUND_CODES.has(err.errorCode)) return new AppError('not_found', msg, { cause: err, details });
  if (INVALID_CODES.has(err.errorCode)) return new AppError('invalid_request', msg, { cause: err, details });
  if (CONFIG_CODES.has(err.errorCode))
    return new AppError('broker_auth_failed', `${msg} (cTrader refused the application credentials)`, {
      cause: err,
      details,
    });
  return new AppError('upstream_error', msg, { cause: err, details });
}

/** Reads: every failure becomes an AppError to throw. */
export function readError(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof OpenApiError) return mapOpenApiError(err, what);
  if (err instanceof NotSentError) return err.appError;
  if (err instanceof RequestTimeoutError)
    return new AppError('upstream_unavailable', `${what}: ${err.message}`, { cause: err, retryable: true });
  if (err instanceof ConnectionLostError)
    return new AppError('upstream_unavailable', `${what}: ${err.message}`, { cause: err, retryable: true });
  return new AppError('internal_error', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/**
 * Writes: only an explicit refusal is `rejected`; anything that may have been applied (timeout, connection
 * lost after sending) is `unresolved`, settled later by the tag, never resent blind.
 */
export function writeFailure(err: unknown, what: string): Exclude<OrderOutcome, { kind: 'confirmed' }> {
  if (err instanceof NotSentError) {
    const d = denied(err.appError.code, `${what}: not sent (${err.message})`);
    // Withdrawn by our own pacing: nothing left, and the same write may go once the connection has room.
    if (err.appError.code === 'rate_limited') d.retry = retryLater(err.appError.retryAfter);
    return d;
  }
  if (err instanceof RequestTimeoutError || err instanceof ConnectionLostError) {
    return unresolved('write_outcome_unknown', `${what}: ${err.message}; outcome unknown`);
  }
  if (err instanceof OpenApiError) {
    const app = mapOpenApiError(err, what);
    // A request frequency limit is one whatever carried it (an error response or an order error event): the
    // broker refused the write for now and says to send it again.
    const limited = app.code === 'rate_limited';
    const later = limited || (err.source === 'error_res' && LATER_CODES.has(err.errorCode));
    // Protocol-level refusals keep our error code (rate_limited, reconnect_required...); business ones the broker's meaning.
    const code =
      limited || (err.source === 'error_res' && app.code !== 'invalid_request' && app.code !== 'not_found')
        ? app.code
        : (REJECT_CODES[err.errorCode] ?? 'broker_rejected');
    return rejected(
      code,
      app.message,
      {
        errorCode: err.errorCode,
        ...(err.retryAfter !== undefined ? { retryAfterSec: err.retryAfter } : {}),
      },
      later ? retryLater(err.retryAfter) : undefined,
    );
  }
  return unresolved('write_outcome_unknown', `${what}: ${err instanceof Error ? err.message : String(err)}`);
}
