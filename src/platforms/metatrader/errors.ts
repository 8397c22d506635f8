import { AppError } from '../../domain/errors.js';
import type { OrderOutcome } from '../adapter.js';
import { type MtTradeResult, parseErrorBody, recommendedRetrySec } from './parse.js';
import type { WireResult } from './raw-client.js';
import { denied, httpRefusal, rejected, retryLater, unresolved } from '../adapter.js';

/**
 * MetaApi answers -> our error tree (reads) and outcome kinds (writes). The rule that matters for writes:
 * anything that may have been applied is `unresolved` (settled later by clientId), never a rejection that
 * would invite a blind resend.
 */

export type TradeClass = 'success' | 'unknown' | 'not_delivered' | 'rejected';

/** Success set of the trade endpoint (fact sheet A5), numeric and symbolic. */
const SUCCESS_NUMERIC = new Set([0, 10008, 10009, 10010, 10025]);
const SUCCESS_STRING = new Set([
  'ERR_NO_ERROR',
  'TRADE_RETCODE_PLACED',
  'TRADE_RETCODE_DONE',
  'TRADE_RETCODE_DONE_PARTIAL',
  'TRADE_RETCODE_NO_CHANGES',
]);

/**
 * Outcome unknown: -11 is documented; -1 and -7 are what third-party clients treat as unknown; MT4 1 (no result)
 * and 128 (trade timeout) are MT4's own "don't know"; MT5 10012 (request cancelled by timeout) is ambiguous enough
 * that a lookup is cheaper than a duplicate.
 */
const UNKNOWN_STRING = new Set([
  'TRADE_RETCODE_DISCONNECTED_DURING_TRADE',
  'TRADE_RETCODE_UNKNOWN',
  'ERR_TRADE_TIMED_OUT',
  'ERR_NO_RESULT',
  'ERR_TRADE_TIMEOUT',
  'TRADE_RETCODE_TIMEOUT',
]);
const UNKNOWN_NUMERIC = new Set([-11, -7, -1, 10012]);
const UNKNOWN_NUMERIC_MT4 = new Set([1, 128]);

export function classifyTradeResult(
  r: Pick<MtTradeResult, 'numericCode' | 'stringCode'>,
  platform: 'mt4' | 'mt5',
): TradeClass {
  // The success set is documented both ways and no failure shares a number or a name with it.
  if (SUCCESS_STRING.has(r.stringCode) || SUCCESS_NUMERIC.has(r.numericCode)) return 'success';
  if (r.stringCode === 'TRADE_RETCODE_DISCONNECTED_BEFORE_TRADE' || r.numericCode === -10) return 'not_delivered';
  if (UNKNOWN_STRING.has(r.stringCode) || UNKNOWN_NUMERIC.has(r.numericCode)) return 'unknown';
  // MT4's 1 and 128 only mean "unknown" on MT4; on MT5 the numbers are not trade codes at all.
  if (platform === 'mt4' && UNKNOWN_NUMERIC_MT4.has(r.numericCode)) return 'unknown';
  return 'rejected';
}

/** Broker refusals in the same vocabulary the other adapters use, so the ledger reads alike across platforms. */
const REJECT_CODES: Record<string, string> = {
  TRADE_RETCODE_INVALID_VOLUME: 'invalid_volume',
  ERR_INVALID_TRADE_VOLUME: 'invalid_volume',
  TRADE_RETCODE_INVALID_PRICE: 'invalid_price',
  ERR_INVALID_PRICE: 'invalid_price',
  TRADE_RETCODE_INVALID_STOPS: 'invalid_stops',
  ERR_INVALID_STOPS: 'invalid_stops',
  TRADE_RETCODE_NO_MONEY: 'not_enough_money',
  ERR_NOT_ENOUGH_MONEY: 'not_enough_money',
  TRADE_RETCODE_MARKET_CLOSED: 'market_closed',
  ERR_MARKET_CLOSED: 'market_closed',
  TRADE_RETCODE_POSITION_CLOSED: 'position_not_found',
  TRADE_RETCODE_REJECT: 'rejected',
  ERR_COMMON_ERROR: 'rejected',
  TRADE_RETCODE_REQUOTE: 'requote',
  TRADE_RETCODE_PRICE_CHANGED: 'requote',
  TRADE_RETCODE_PRICE_OFF: 'requote',
  ERR_REQUOTE: 'requote',
  ERR_PRICE_CHANGED: 'requote',
  ERR_OFF_QUOTES: 'requote',
  TRADE_RETCODE_TRADE_DISABLED: 'trade_disabled',
  TRADE_RETCODE_CLIENT_DISABLES_AT: 'trade_disabled',
  ERR_TRADE_DISABLED: 'trade_disabled',
  TRADE_RETCODE_TOO_MANY_REQUESTS: 'rate_limited',
  ERR_TOO_MANY_REQUESTS: 'rate_limited',
  ERR_TOO_FREQUENT_REQUESTS: 'rate_limited',
  TRADE_RETCODE_INVALID: 'invalid_request',
  ERR_INVALID_TRADE_PARAMETERS: 'invalid_request',
};

export function rejectCode(r: Pick<MtTradeResult, 'numericCode' | 'stringCode'>): string {
  return REJECT_CODES[r.stringCode] ?? (r.stringCode ? `mt_${r.stringCode.toLowerCase()}` : `mt_code_${r.numericCode}`);
}

/** Seconds to wait on a 429: metadata.recommendedRetryTime first (more precise), then Retry-After, at least 1. */
export function retryAfterOf(body: unknown, retryAfterHeader: number | null, now = Date.now()): number {
  const fromBody = recommendedRetrySec(parseErrorBody(body).metadata, now);
  return Math.max(1, fromBody ?? retryAfterHeader ?? 1);
}

export function httpStatusError(
  status: number,
  body: unknown,
  retryAfterHeader: number | null,
  what: string,
): AppError {
  const e = parseErrorBody(body);
  const msg = e.message ?? e.name ?? `HTTP ${status}`;
  const details: Record<string, unknown> = {
    status,
    upstreamError: e.name,
    upstreamMessage: msg,
    ...(e.code ? { upstreamCode: e.code } : {}),
  };
  if (status === 400 || status === 422) return new AppError('invalid_request', `${what}: ${msg}`, { details });
  if (status === 401 || status === 403)
    return new AppError('broker_auth_failed', `${what}: MetaApi refused the credentials (${msg})`, { details });
  if (status === 404) return new AppError('not_found', `${what}: ${msg}`, { details });
  if (status === 409) return new AppError('conflict', `${what}: ${msg}`, { retryable: true, details });
  if (status === 429) {
    return new AppError('rate_limited', `${what}: rate limited by MetaApi`, {
      retryable: true,
      retryAfter: retryAfterOf(body, retryAfterHeader),
      details,
    });
  }
  return new AppError('upstream_error', `${what}: ${msg}`, { retryable: status >= 500, details });
}

/** Mapping for reads (and any call that changes nothing): a failure is an AppError to throw. */
export function readError(r: WireResult, what: string): AppError {
  if (r.kind === 'timeout')
    return new AppError('upstream_unavailable', `${what}: MetaApi did not answer in time`, { retryable: true });
  if (r.kind === 'network')
    return new AppError('upstream_unavailable', `${what}: ${r.message}`, {
      retryable: true,
      details: { code: r.code },
    });
  if (r.status >= 200 && r.status < 300)
    return new AppError('upstream_error', `${what}: unexpected HTTP ${r.status}`, { details: { status: r.status } });
  return httpStatusError(r.status, r.body, r.retryAfterSec, what);
}

type Failure = Exclude<OrderOutcome, { kind: 'confirmed' }>;

const unknownOutcome = (message: string): Failure => unresolved('write_outcome_unknown', message);

/** A trade call that did not come back as HTTP 200: unresolved unless the answer proves nothing was applied. */
export function tradeTransportFailure(r: WireResult, what: string): Failure | null {
  if (r.kind === 'timeout') return unknownOutcome(`${what}: no answer within the timeout; outcome unknown`);
  if (r.kind === 'network') {
    if (r.notSent) return denied('upstream_unavailable', `${what}: not sent (${r.message})`);
    return unknownOutcome(`${what}: connection failed mid-request (${r.message}); outcome unknown`);
  }
  if (r.status >= 200 && r.status < 300) return null;
  // 5xx and 409 may come after the terminal got the request; only these 4xx prove it was refused.
  if (r.status >= 500 || r.status === 409 || r.status < 400)
    return unknownOutcome(`${what}: HTTP ${r.status}; outcome unknown`);
  const err = httpStatusError(r.status, r.body, r.retryAfterSec, what);
  // 429 TooManyRequestsError: its hint is metadata.recommendedRetryTime, else Retry-After (retryAfterOf).
  return httpRefusal(err, r);
}

/** Outcome of a trade answer that is not a success; null for success. */
export function tradeResultFailure(res: MtTradeResult, platform: 'mt4' | 'mt5', what: string): Failure | null {
  const cls = classifyTradeResult(res, platform);
  const label = `${res.stringCode || 'code'} (${res.numericCode})`;
  switch (cls) {
    case 'success':
      return null;
    case 'unknown':
      return unknownOutcome(`${what}: ${label} ${res.message}; outcome unknown`.trim());
    case 'not_delivered':
      return denied('upstream_unavailable', `${what}: ${label} not delivered to the broker`);
    case 'rejected': {
      const code = rejectCode(res);
      // The terminal's own "too many requests" retcodes: refused, nothing applied, no hint given.
      return rejected(
        code,
        `${what}: ${label} ${res.message}`.trim(),
        res,
        code === 'rate_limited' ? retryLater(null) : undefined,
      );
    }
  }
}
