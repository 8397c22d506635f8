import { describe, expect, it } from 'vitest';
import {
  ConnectionLostError,
  NotSentError,
  OpenApiError,
  RequestTimeoutError,
  readError,
  writeFailure,
} from './errors.js';
import { AppError } from '../../domain/errors.js';

const res = (code: string, retryAfter?: number) => new OpenApiError(code, 'x', 'error_res', retryAfter);

describe('cTrader error mapping', () => {
  it('maps reads to the error tree', () => {
    expect(readError(res('CH_ACCESS_TOKEN_INVALID'), 'r').code).toBe('reconnect_required');
    expect(readError(res('OA_AUTH_TOKEN_EXPIRED'), 'r').code).toBe('reconnect_required');
    const rate = readError(res('BLOCKED_PAYLOAD_TYPE', 4), 'r');
    expect(rate).toMatchObject({ code: 'rate_limited', retryAfter: 4, retryable: true });
    expect(readError(res('REQUEST_FREQUENCY_EXCEEDED'), 'r')).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    expect(readError(res('CANT_ROUTE_REQUEST'), 'r')).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(readError(res('POSITION_NOT_FOUND'), 'r').code).toBe('not_found');
    expect(readError(res('TRADING_BAD_VOLUME'), 'r').code).toBe('invalid_request');
    expect(readError(res('CH_CLIENT_AUTH_FAILURE'), 'r').code).toBe('broker_auth_failed');
    expect(readError(res('SOMETHING_NEW'), 'r').code).toBe('upstream_error');
    expect(readError(new RequestTimeoutError(10, []), 'r').code).toBe('upstream_unavailable');
    expect(readError(new ConnectionLostError('gone', []), 'r').code).toBe('upstream_unavailable');
  });

  it('maps writes to outcomes: only explicit refusals are rejected', () => {
    expect(writeFailure(new RequestTimeoutError(10, []), 'w')).toMatchObject({
      kind: 'unresolved',
      code: 'write_outcome_unknown',
    });
    expect(writeFailure(new ConnectionLostError('gone', []), 'w')).toMatchObject({ kind: 'unresolved' });
    expect(writeFailure(new NotSentError('down', new AppError('upstream_unavailable', 'down')), 'w')).toMatchObject({
      kind: 'denied',
      code: 'upstream_unavailable',
    });
    expect(writeFailure(new OpenApiError('NOT_ENOUGH_MONEY', 'm', 'order_error_event'), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'not_enough_money',
    });
    expect(writeFailure(new OpenApiError('TRADING_BAD_VOLUME', 'm', 'error_res'), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'invalid_volume',
    });
    expect(writeFailure(res('BLOCKED_PAYLOAD_TYPE', 2), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      raw: { retryAfterSec: 2 },
      retry: { afterSec: 2 },
    });
    // A request frequency limit is one to send again whatever carried it; it used to read as broker_rejected.
    expect(writeFailure(new OpenApiError('REQUEST_FREQUENCY_EXCEEDED', 'm', 'order_error_event'), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      retry: { afterSec: null },
    });
    // Withdrawn by our own pacing before it left: not sent, to be sent again.
    expect(
      writeFailure(new NotSentError('paced', new AppError('rate_limited', 'paced', { retryable: true })), 'w'),
    ).toMatchObject({ kind: 'denied', code: 'rate_limited', retry: { afterSec: null } });
    expect(writeFailure(new OpenApiError('NOT_ENOUGH_MONEY', 'm', 'order_error_event'), 'w')).not.toHaveProperty(
      'retry',
    );
    // The back-off group, answered to the request itself: it went nowhere, send it again later (no hint).
    for (const code of [
      'CANT_ROUTE_REQUEST',
      'CH_SERVER_NOT_REACHABLE',
      'SERVER_IS_UNDER_MAINTENANCE',
      'PENDING_EXECUTION',
    ])
      expect(writeFailure(res(code), 'w')).toMatchObject({
        kind: 'rejected',
        code: 'upstream_unavailable',
        retry: { afterSec: null },
      });
    // Not these: an unknown error, or a concurrent modification (the next read decides), or a token problem.
    for (const code of ['UNKNOWN_ERROR', 'CONCURRENT_MODIFICATION', 'CH_ACCESS_TOKEN_INVALID'])
      expect(writeFailure(res(code), 'w')).not.toHaveProperty('retry');
    expect(writeFailure(res('CH_ACCESS_TOKEN_INVALID'), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'reconnect_required',
    });
    expect(writeFailure(new OpenApiError('WHATEVER', 'm', 'order_error_event'), 'w')).toMatchObject({
      kind: 'rejected',
      code: 'broker_rejected',
    });
  });
});
