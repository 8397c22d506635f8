import { describe, expect, it } from 'vitest';
import { httpStatusError, isEnvelopeError, readError, writeFailure } from './errors.js';
import type { WireResult } from './raw-client.js';

const res = (
  status: number,
  body: unknown = { s: 'error', errmsg: 'nope' },
  retryAfterSec: number | null = null,
): WireResult => ({
  kind: 'response',
  status,
  body,
  retryAfterSec,
});
const timeout: WireResult = { kind: 'timeout', method: 'POST', path: '/x' };
const reset: WireResult = {
  kind: 'network',
  method: 'POST',
  path: '/x',
  code: 'ECONNRESET',
  message: 'socket hang up',
  notSent: false,
};
const refused: WireResult = {
  kind: 'network',
  method: 'POST',
  path: '/x',
  code: 'ECONNREFUSED',
  message: 'refused',
  notSent: true,
};

describe('TradeLocker error mapping (reads)', () => {
  it.each([
    [400, 'invalid_request'],
    [401, 'broker_auth_failed'],
    [403, 'broker_auth_failed'],
    [404, 'not_found'],
    [429, 'rate_limited'],
    [500, 'upstream_error'],
    [502, 'upstream_error'],
  ])('HTTP %i -> %s', (status, code) => {
    expect(readError(res(status), 'x').code).toBe(code);
  });

  it('429 carries Retry-After and is retryable', () => {
    const e = httpStatusError(429, null, 7, 'x');
    expect(e).toMatchObject({ code: 'rate_limited', retryAfter: 7, retryable: true });
  });

  it('timeouts and network errors are upstream_unavailable and retryable', () => {
    expect(readError(timeout, 'x')).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(readError(reset, 'x')).toMatchObject({ code: 'upstream_unavailable', retryable: true });
  });

  it('s:"error" inside HTTP 200 is an error; "ok" and "no_data" are not', () => {
    expect(isEnvelopeError({ s: 'error', errmsg: 'x' })).toBe(true);
    expect(isEnvelopeError({ s: 'ok', d: {} })).toBe(false);
    expect(isEnvelopeError({ s: 'no_data' })).toBe(false);
    expect(isEnvelopeError({ accounts: [] })).toBe(false);
    expect(readError(res(200), 'x')).toMatchObject({ code: 'upstream_error', message: 'x: nope' });
  });
});

describe('TradeLocker error mapping (writes)', () => {
  it('a timeout or a mid-request reset is unresolved: never reported as a rejection', () => {
    expect(writeFailure(timeout, 'x')).toMatchObject({ kind: 'unresolved', code: 'write_outcome_unknown' });
    expect(writeFailure(reset, 'x')).toMatchObject({ kind: 'unresolved', code: 'write_outcome_unknown' });
  });

  it('5xx may follow an applied write, so it is unresolved too', () => {
    expect(writeFailure(res(502), 'x')).toMatchObject({ kind: 'unresolved' });
  });

  it('a connection that was never made is denied (nothing sent)', () => {
    expect(writeFailure(refused, 'x')).toMatchObject({ kind: 'denied', code: 'upstream_unavailable' });
  });

  it('HTTP 200 with s:"error" is rejected with the broker message', () => {
    expect(writeFailure(res(200, { s: 'error', errmsg: 'Not enough margin' }), 'x')).toMatchObject({
      kind: 'rejected',
      message: 'Not enough margin',
    });
  });

  it('4xx is rejected with the mapped code; 429 keeps retryAfterSec', () => {
    expect(writeFailure(res(400), 'x')).toMatchObject({ kind: 'rejected', code: 'invalid_request' });
    expect(writeFailure(res(404), 'x')).toMatchObject({ kind: 'rejected', code: 'not_found' });
    expect(writeFailure(res(429, null, 2), 'x')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      raw: { retryAfterSec: 2 },
      retry: { afterSec: 2 },
    });
    // A 429 without Retry-After is still one to send again; no other refusal is.
    expect(writeFailure(res(429, null, null), 'x')).toMatchObject({ retry: { afterSec: null } });
    expect(writeFailure(res(400), 'x')).not.toHaveProperty('retry');
    expect(writeFailure(res(200, { s: 'error', errmsg: 'Not enough margin' }), 'x')).not.toHaveProperty('retry');
  });

  it('a plain success is no failure', () => {
    expect(writeFailure(res(200, { s: 'ok', d: { orderId: '1' } }), 'x')).toBeNull();
    expect(writeFailure(res(204, null), 'x')).toBeNull();
  });
});
