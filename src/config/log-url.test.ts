import { describe, expect, it } from 'vitest';
import { loggableUrl } from './log-url.js';

describe('request URLs in logs', () => {
  it('keep paging and filter values, drop every other query value and all of an OAuth callback', () => {
    expect(loggableUrl('/v1/trades?limit=50&cursor=abc')).toBe('/v1/trades?limit=50&cursor=abc');
    expect(loggableUrl('/v1/accounts?api_key=ctk_x&apikey=y&token=z')).toBe(
      '/v1/accounts?api_key=[redacted]&apikey=[redacted]&token=[redacted]',
    );
    expect(loggableUrl('/api/connect/platformc/callback?code=c0de&state=con_1.n0nce')).toBe(
      '/api/connect/platformc/callback?code=[redacted]&state=[redacted]',
    );
    expect(loggableUrl('/v1/trades?cursor=ctk_abcdef')).toBe('/v1/trades?cursor=[redacted]');
    expect(loggableUrl('/v1/me?ctk_abcdefabcdef')).toBe('/v1/me?[redacted]');
    expect(loggableUrl('/v1/me')).toBe('/v1/me');
  });

  it('drop a path segment shaped like a secret, or longer than any id, with or without a query (issue 46, finding 6)', () => {
    expect(loggableUrl('/v1/accounts/ctk_0123456789abcdef/positions')).toBe('/v1/accounts/[redacted]/positions');
    expect(loggableUrl('/bridge/v1/ws/ctbt_secret')).toBe('/bridge/v1/ws/[redacted]');
    expect(loggableUrl('/v1/accounts/ctat_x?limit=5')).toBe('/v1/accounts/[redacted]?limit=5');
    expect(loggableUrl('/v1/trades/eyJhbGciOiJIUzI1NiJ9')).toBe('/v1/trades/[redacted]');
    expect(loggableUrl(`/v1/trades/${'a'.repeat(65)}`)).toBe('/v1/trades/[redacted]');
    // Percent-encoded, the same.
    expect(loggableUrl('/v1/accounts/ctk%5F0123')).toBe('/v1/accounts/[redacted]');
    expect(loggableUrl('/v1/accounts/acc_01JD0000000000000000000000/positions')).toBe(
      '/v1/accounts/acc_01JD0000000000000000000000/positions',
    );
  });
});
