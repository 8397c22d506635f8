import { describe, expect, it } from 'vitest';
import {
  classifyTradeResult,
  httpStatusError,
  readError,
  rejectCode,
  retryAfterOf,
  tradeResultFailure,
  tradeTransportFailure,
} from './errors.js';
import type { WireResult } from './raw-client.js';

const res = (status: number, body: unknown, retryAfterSec: number | null = null): WireResult => ({
  kind: 'response',
  status,
  body,
  retryAfterSec,
});
const tr = (numericCode: number, stringCode: string) => ({
  numericCode,
  stringCode,
  message: 'm',
  orderId: null,
  positionId: null,
});

describe('trade result classification', () => {
  it('knows the documented success set by number and by name', () => {
    for (const [n, s] of [
      [0, 'ERR_NO_ERROR'],
      [10008, 'TRADE_RETCODE_PLACED'],
      [10009, 'TRADE_RETCODE_DONE'],
      [10010, 'TRADE_RETCODE_DONE_PARTIAL'],
      [10025, 'TRADE_RETCODE_NO_CHANGES'],
    ] as const) {
      expect(classifyTradeResult(tr(n, s), 'mt5')).toBe('success');
      expect(classifyTradeResult(tr(Number.NaN, s), 'mt5')).toBe('success');
      expect(classifyTradeResult(tr(n, ''), 'mt5')).toBe('success');
    }
  });

  it('treats -11 and the other "don\'t know" codes as unknown, -10 as not delivered', () => {
    expect(classifyTradeResult(tr(-11, 'TRADE_RETCODE_DISCONNECTED_DURING_TRADE'), 'mt5')).toBe('unknown');
    expect(classifyTradeResult(tr(-1, 'TRADE_RETCODE_UNKNOWN'), 'mt5')).toBe('unknown');
    expect(classifyTradeResult(tr(-7, 'ERR_TRADE_TIMED_OUT'), 'mt5')).toBe('unknown');
    expect(classifyTradeResult(tr(10012, 'TRADE_RETCODE_TIMEOUT'), 'mt5')).toBe('unknown');
    expect(classifyTradeResult(tr(128, 'ERR_TRADE_TIMEOUT'), 'mt4')).toBe('unknown');
    expect(classifyTradeResult(tr(1, ''), 'mt4')).toBe('unknown');
    expect(classifyTradeResult(tr(1, ''), 'mt5')).toBe('rejected');
    expect(classifyTradeResult(tr(-10, 'TRADE_RETCODE_DISCONNECTED_BEFORE_TRADE'), 'mt5')).toBe('not_delivered');
  });

  it('maps refusals to outcomes with shared codes', () => {
    expect(tradeResultFailure(tr(10014, 'TRADE_RETCODE_INVALID_VOLUME'), 'mt5', 'x')).toMatchObject({
      kind: 'rejected',
      code: 'invalid_volume',
    });
    expect(tradeResultFailure(tr(134, 'ERR_NOT_ENOUGH_MONEY'), 'mt4', 'x')).toMatchObject({
      kind: 'rejected',
      code: 'not_enough_money',
    });
    expect(tradeResultFailure(tr(-11, 'TRADE_RETCODE_DISCONNECTED_DURING_TRADE'), 'mt5', 'x')).toMatchObject({
      kind: 'unresolved',
      code: 'write_outcome_unknown',
    });
    expect(tradeResultFailure(tr(-10, 'TRADE_RETCODE_DISCONNECTED_BEFORE_TRADE'), 'mt5', 'x')).toMatchObject({
      kind: 'denied',
    });
    expect(tradeResultFailure(tr(10009, 'TRADE_RETCODE_DONE'), 'mt5', 'x')).toBeNull();
    expect(rejectCode(tr(10031, 'TRADE_RETCODE_CONNECTION'))).toBe('mt_trade_retcode_connection');
    expect(rejectCode(tr(77, ''))).toBe('mt_code_77');
  });
});

describe('transport and HTTP mapping', () => {
  it('a write that may have arrived is unresolved; only a provable non-send is denied', () => {
    expect(tradeTransportFailure({ kind: 'timeout', method: 'POST', path: '/t' }, 'x')).toMatchObject({
      kind: 'unresolved',
      code: 'write_outcome_unknown',
    });
    expect(
      tradeTransportFailure(
        { kind: 'network', method: 'POST', path: '/t', code: 'ECONNRESET', message: 'reset', notSent: false },
        'x',
      ),
    ).toMatchObject({ kind: 'unresolved' });
    expect(
      tradeTransportFailure(
        { kind: 'network', method: 'POST', path: '/t', code: 'ECONNREFUSED', message: 'refused', notSent: true },
        'x',
      ),
    ).toMatchObject({ kind: 'denied' });
    expect(tradeTransportFailure(res(502, 'Bad gateway'), 'x')).toMatchObject({ kind: 'unresolved' });
    expect(tradeTransportFailure(res(409, { error: 'ConflictError', message: 'c' }), 'x')).toMatchObject({
      kind: 'unresolved',
    });
    expect(
      tradeTransportFailure(
        res(400, { id: 1, error: 'ValidationError', message: 'bad', details: [{ parameter: 'volume' }] }),
        'x',
      ),
    ).toMatchObject({ kind: 'rejected', code: 'invalid_request' });
    expect(tradeTransportFailure(res(200, {}), 'x')).toBeNull();
  });

  it("a 429 TooManyRequests is a refusal to send again, with its hint; the terminal's own retcode has none", () => {
    const soon = new Date(Date.now() + 4200).toISOString();
    const limited = tradeTransportFailure(
      res(429, { error: 'TooManyRequestsError', message: 'slow', metadata: { recommendedRetryTime: soon } }, 2),
      'x',
    );
    expect(limited).toMatchObject({ kind: 'rejected', code: 'rate_limited', retry: { afterSec: 5 } });
    expect(tradeTransportFailure(res(429, 'Too many requests', 3), 'x')).toMatchObject({ retry: { afterSec: 3 } });
    expect(tradeResultFailure(tr(10024, 'TRADE_RETCODE_TOO_MANY_REQUESTS'), 'mt5', 'x')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      retry: { afterSec: null },
    });
    expect(tradeTransportFailure(res(400, { error: 'ValidationError', message: 'bad' }), 'x')).not.toHaveProperty(
      'retry',
    );
    expect(tradeResultFailure(tr(10019, 'TRADE_RETCODE_NO_MONEY'), 'mt5', 'x')).not.toHaveProperty('retry');
  });

  it('429: retryAfter from recommendedRetryTime, else Retry-After, at least 1 second', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterOf({ metadata: { recommendedRetryTime: '2026-01-01T00:00:04.200Z' } }, 2, now)).toBe(5);
    expect(retryAfterOf({ error: 'TooManyRequestsError' }, 3, now)).toBe(3);
    expect(retryAfterOf('Too many requests', null, now)).toBe(1);
    const err = httpStatusError(
      429,
      { error: 'TooManyRequestsError', metadata: { recommendedRetryTime: new Date(Date.now() + 6_000).toISOString() } },
      null,
      'r',
    );
    expect(err).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(err.retryAfter).toBeGreaterThanOrEqual(5);
    expect(tradeTransportFailure(res(429, { error: 'TooManyRequestsError' }, 2), 'x')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      raw: { retryAfterSec: 2 },
    });
  });

  it('reads: HTTP statuses, error body shapes and transport failures', () => {
    expect(readError(res(401, { id: 2, error: 'UnauthorizedError', message: 'no' }), 'r').code).toBe(
      'broker_auth_failed',
    );
    expect(readError(res(404, { error: 'NotFoundError', message: 'not deployed' }), 'r')).toMatchObject({
      code: 'not_found',
      details: { upstreamMessage: 'not deployed' },
    });
    expect(readError(res(400, { error: 'ValidationError', message: 'v', details: 'E_AUTH' }), 'r')).toMatchObject({
      code: 'invalid_request',
      details: { upstreamCode: 'E_AUTH' },
    });
    expect(
      readError(res(400, { error: 'ValidationError', message: 'v', details: { code: 'E_SRV_NOT_FOUND' } }), 'r'),
    ).toMatchObject({ details: { upstreamCode: 'E_SRV_NOT_FOUND' } });
    expect(readError(res(500, '<html>oops</html>'), 'r')).toMatchObject({ code: 'upstream_error', retryable: true });
    expect(readError({ kind: 'timeout', method: 'GET', path: '/p' }, 'r')).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
    });
  });
});
