import { afterEach, describe, expect, it } from 'vitest';
import { dxBaseUrl } from './endpoints.js';

describe('dxBaseUrl: the REST base of a DXtrade server the user typed', () => {
  afterEach(() => {
    delete process.env.COPYTRADE_PLATFORMD_URL;
  });

  it('takes an https URL or a bare host name and appends /dxsca-web once', () => {
    expect(dxBaseUrl('trade.broker.example')).toBe('https://trade.broker.example/dxsca-web');
    expect(dxBaseUrl('https://trade.broker.example/')).toBe('https://trade.broker.example/dxsca-web');
    expect(dxBaseUrl('https://trade.broker.example/dxsca-web')).toBe('https://trade.broker.example/dxsca-web');
  });

  it('refuses what would make the service call an address of its own choosing: http, IP literals, localhost, credentials', () => {
    for (const bad of [
      'http://trade.broker.example',
      '127.0.0.1',
      'https://10.0.0.5',
      'https://[::1]',
      'localhost',
      'https://user:pw@trade.broker.example',
      'intranet',
    ])
      expect(() => dxBaseUrl(bad), bad).toThrow();
  });

  it('COPYTRADE_PLATFORMD_URL replaces every server', () => {
    process.env.COPYTRADE_PLATFORMD_URL = 'https://gateway.example/dxsca-web/';
    expect(dxBaseUrl('anything.example')).toBe('https://gateway.example/dxsca-web');
  });
});
