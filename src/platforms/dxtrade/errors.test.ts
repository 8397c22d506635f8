import { describe, expect, it } from 'vitest';
import { dxErrorOf, readError, writeFailure } from './errors.js';
import type { WireResult } from './raw-client.js';

const res = (
  status: number,
  body: unknown = { errorCode: '2', description: 'Entity not found at server' },
  retryAfterSec: number | null = null,
): WireResult => ({
  kind: 'response',
  status,
  body,
  retryAfterSec,
});

describe('DXtrade error mapping', () => {
  it('reads the spec error body {errorCode, description}, numeric codes too', () => {
    expect(dxErrorOf({ errorCode: 100, description: 'Order with this id already exists (x)' })).toEqual({
      errorCode: '100',
      description: 'Order with this id already exists (x)',
    });
    expect(dxErrorOf(null)).toEqual({ errorCode: null, description: null });
  });

  it.each([
    [400, 'invalid_request'],
    [401, 'broker_auth_failed'],
    [403, 'broker_auth_failed'],
    [404, 'not_found'],
    [409, 'upstream_error'],
    [429, 'rate_limited'],
    [500, 'upstream_error'],
  ])('a read answered %i is %s', (status, code) => {
    expect(readError(res(status), 'read').code).toBe(code);
  });

  it('a 429 read carries the Retry-After hint, or 1 s when the server gives none', () => {
    expect(readError(res(429, {}, 7), 'read').retryAfter).toBe(7);
    expect(readError(res(429, {}), 'read').retryAfter).toBe(1);
  });

  it('a 2xx write is no failure; a 409 order check is rejected, with the description and code', () => {
    expect(writeFailure(res(200, { orderId: 1 }), 'place')).toBeNull();
    const out = writeFailure(res(409, { errorCode: '43', description: 'NOT_ENOUGH_MONEY: margin' }), 'place');
    expect(out).toMatchObject({ kind: 'rejected', code: 'broker_rejected' });
    expect(out?.message).toContain('NOT_ENOUGH_MONEY');
    expect(out?.message).toContain('(43)');
  });

  it('a 429 write is rejected rate_limited with retry; a 5xx, a timeout or a reset is unresolved; refused connect is denied', () => {
    expect(writeFailure(res(429, {}, 2), 'place')).toMatchObject({
      kind: 'rejected',
      code: 'rate_limited',
      retry: { afterSec: 2 },
    });
    expect(writeFailure(res(502, {}), 'place')).toMatchObject({ kind: 'unresolved' });
    expect(writeFailure({ kind: 'timeout', method: 'POST', path: '/x' }, 'place')).toMatchObject({
      kind: 'unresolved',
    });
    const net = { kind: 'network', method: 'POST', path: '/x', code: 'ECONNRESET', message: 'reset' } as const;
    expect(writeFailure({ ...net, notSent: false }, 'place')).toMatchObject({ kind: 'unresolved' });
    expect(writeFailure({ ...net, code: 'ECONNREFUSED', notSent: true }, 'place')).toMatchObject({ kind: 'denied' });
  });
});
