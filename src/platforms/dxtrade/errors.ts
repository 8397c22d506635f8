import { AppError } from '../../domain/errors.js';
import type { OrderOutcome } from '../adapter.js';
import { denied, httpRefusal, rejected, unresolved } from '../adapter.js';
import type { WireResult } from './raw-client.js';

/**
 * DXtrade answers -> our error tree (reads) and outcome kinds (writes). The spec reports every error by HTTP status
 * with a body `{errorCode, description}`: 400 malformed (codes 31-33, 101), 401 not authorised (3: bad username or
 * password), 403 a missing condition (99: no If-Match), 404 unknown or not permitted (2), 409 a request the server
 * understood but refused (order checks, 100: duplicate orderCode), 429 too many requests, 5xx server errors.
 */

export interface DxErrorBody {
  errorCode: string | null;
  description: string | null;
}

export function dxErrorOf(body: unknown): DxErrorBody {
  if (body && typeof body === 'object') {
    const b = body as { errorCode?: unknown; description?: unknown };
    const code = typeof b.errorCode === 'string' || typeof b.errorCode === 'number' ? String(b.errorCode) : null;
    const description = typeof b.description === 'string' && b.description.length > 0 ? b.description : null;
    return { errorCode: code, description };
  }
  return { errorCode: null, description: typeof body === 'string' && body.length < 500 && body ? body : null };
}

export function httpStatusError(status: number, body: unknown, retryAfterSec: number | null, what: string): AppError {
  const { errorCode, description } = dxErrorOf(body);
  const msg = description ?? `HTTP ${status}`;
  const details = { status, upstreamMessage: msg, ...(errorCode !== null ? { upstreamCode: errorCode } : {}) };
  if (status === 400) return new AppError('invalid_request', `${what}: ${msg}`, { details });
  if (status === 401 || status === 403)
    return new AppError('broker_auth_failed', `${what}: DXtrade refused the request (${msg})`, { details });
  if (status === 404) return new AppError('not_found', `${what}: ${msg}`, { details });
  if (status === 409) return new AppError('upstream_error', `${what}: ${msg}`, { details });
  if (status === 429) {
    return new AppError('rate_limited', `${what}: rate limited by DXtrade`, {
      retryable: true,
      retryAfter: retryAfterSec ?? 1,
      details,
    });
  }
  return new AppError('upstream_error', `${what}: ${msg}`, { retryable: status >= 500, details });
}

/** Reads (and anything that changes nothing): a failure is an AppError to throw. */
export function readError(r: WireResult, what: string): AppError {
  if (r.kind === 'timeout')
    return new AppError('upstream_unavailable', `${what}: DXtrade did not answer in time`, { retryable: true });
  if (r.kind === 'network')
    return new AppError('upstream_unavailable', `${what}: ${r.message}`, {
      retryable: true,
      details: { code: r.code },
    });
  if (r.status >= 200 && r.status < 300)
    return new AppError('upstream_error', `${what}: unexpected answer`, { details: { status: r.status } });
  return httpStatusError(r.status, r.body, r.retryAfterSec, what);
}

/**
 * Writes that did not succeed. Anything that may have been applied is `unresolved` (settled later by orderCode);
 * only a 4xx proves the server refused it. Null for a success.
 */
export function writeFailure(r: WireResult, what: string): Exclude<OrderOutcome, { kind: 'confirmed' }> | null {
  if (r.kind === 'timeout')
    return unresolved('write_outcome_unknown', `${what}: no answer within the timeout; outcome unknown`);
  if (r.kind === 'network') {
    if (r.notSent) return denied('upstream_unavailable', `${what}: not sent (${r.message})`);
    return unresolved(
      'write_outcome_unknown',
      `${what}: connection failed mid-request (${r.message}); outcome unknown`,
    );
  }
  if (r.status >= 200 && r.status < 300) return null;
  if (r.status >= 500) return unresolved('write_outcome_unknown', `${what}: HTTP ${r.status}; outcome unknown`);
  if (r.status === 409) {
    const { errorCode, description } = dxErrorOf(r.body);
    return rejected('broker_rejected', `${what}: ${description ?? 'refused'}${errorCode ? ` (${errorCode})` : ''}`, {
      status: r.status,
      body: r.body,
    });
  }
  const err = httpStatusError(r.status, r.body, r.retryAfterSec, what);
  return httpRefusal({ code: err.code, message: err.message, retryAfter: err.retryAfter }, r);
}
