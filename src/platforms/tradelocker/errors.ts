import { AppError } from '../../domain/errors.js';
import type { OrderOutcome } from '../adapter.js';
import type { WireResult } from './raw-client.js';
import { denied, httpRefusal, rejected, unresolved } from '../adapter.js';

/**
 * TradeLocker answers -> our error tree (reads) and outcome kinds (writes). The HTTP mapping is the spec's
 * platform B table: 400 invalid_request, 401/403 broker_auth_failed (the broker's refusal, not the caller's credential), 404 not_found, 409 write_outcome_unknown,
 * 429 rate_limited (+Retry-After), other upstream 502 -> upstream_error, read timeout/network 503 ->
 * upstream_unavailable.
 */

export function errmsgOf(body: unknown): string | null {
  if (body && typeof body === 'object') {
    const m = (body as { errmsg?: unknown }).errmsg ?? (body as { message?: unknown }).message;
    if (typeof m === 'string' && m.length > 0) return m;
  }
  return typeof body === 'string' && body.length > 0 && body.length < 500 ? body : null;
}

/** `{s:"error"}` (or anything but "ok"/"no_data") inside a 2xx: the real API's way of refusing. */
export function isEnvelopeError(body: unknown): boolean {
  if (!body || typeof body !== 'object' || !('s' in body)) return false;
  const s = (body as { s: unknown }).s;
  return s !== 'ok' && s !== 'no_data';
}

export function httpStatusError(status: number, body: unknown, retryAfterSec: number | null, what: string): AppError {
  const msg = errmsgOf(body) ?? `HTTP ${status}`;
  const details = { status, upstreamMessage: msg };
  if (status === 400 || status === 422) return new AppError('invalid_request', `${what}: ${msg}`, { details });
  if (status === 401 || status === 403)
    return new AppError('broker_auth_failed', `${what}: TradeLocker refused the credentials (${msg})`, { details });
  if (status === 404) return new AppError('not_found', `${what}: ${msg}`, { details });
  if (status === 429) {
    return new AppError('rate_limited', `${what}: rate limited by TradeLocker`, {
      retryable: true,
      ...(retryAfterSec !== null ? { retryAfter: retryAfterSec } : {}),
      details,
    });
  }
  return new AppError('upstream_error', `${what}: ${msg}`, { retryable: status >= 500, details });
}

/** Mapping for reads (and for any call that changes nothing): a failure is an AppError to throw. */
export function readError(r: WireResult, what: string): AppError {
  if (r.kind === 'timeout')
    return new AppError('upstream_unavailable', `${what}: TradeLocker did not answer in time`, { retryable: true });
  if (r.kind === 'network')
    return new AppError('upstream_unavailable', `${what}: ${r.message}`, {
      retryable: true,
      details: { code: r.code },
    });
  if (r.status >= 200 && r.status < 300) {
    return new AppError('upstream_error', `${what}: ${errmsgOf(r.body) ?? 'unexpected answer'}`, {
      details: { status: r.status },
    });
  }
  return httpStatusError(r.status, r.body, r.retryAfterSec, what);
}

/**
 * Mapping for writes that did not succeed. The rule that matters: anything that may have been applied is
 * `unresolved` (the reconciler settles it by strategyId), never a rejection that would invite a blind resend.
 * Returns null for a plain success, which the caller turns into `confirmed`.
 */
export function writeFailure(r: WireResult, what: string): Exclude<OrderOutcome, { kind: 'confirmed' }> | null {
  if (r.kind === 'timeout') {
    return unresolved('write_outcome_unknown', `${what}: no answer within the timeout; outcome unknown`);
  }
  if (r.kind === 'network') {
    if (r.notSent) return denied('upstream_unavailable', `${what}: not sent (${r.message})`);
    return unresolved(
      'write_outcome_unknown',
      `${what}: connection failed mid-request (${r.message}); outcome unknown`,
    );
  }
  const msg = errmsgOf(r.body);
  if (r.status >= 200 && r.status < 300) {
    if (isEnvelopeError(r.body)) return rejected('broker_rejected', msg ?? `${what}: rejected`, r.body);
    return null;
  }
  // A gateway error can come after the broker applied the write; only 4xx proves it was refused.
  if (r.status >= 500) {
    return unresolved('write_outcome_unknown', `${what}: HTTP ${r.status}; outcome unknown`);
  }
  const err = httpStatusError(r.status, r.body, r.retryAfterSec, what);
  return httpRefusal(err, r);
}
