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
});
