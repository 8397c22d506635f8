import { describe, expect, it } from 'vitest';
import { metaApiRegionOverrides } from '../endpoints.js';
import { MetaApiHosts } from './hosts.js';

const PROV = 'https://mt-provisioning-api-v1.agiliumtrade.agiliumtrade.ai';

/** A provisioning host that answers the domain lookup and account reads, and counts what it was asked. */
function provisioning(
  accounts: Record<string, string> = {},
  domain = 'agiliumtrade.ai',
  hostname = 'mt-client-api-v1',
) {
  const asked: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    asked.push(url.href);
    expect(new Headers(init?.headers).get('auth-token')).toBe('tok');
    if (url.pathname === '/users/current/servers/mt-client-api')
      return new Response(JSON.stringify({ domain, hostname }), { status: 200 });
    const m = /^\/users\/current\/accounts\/([^/]+)$/.exec(url.pathname);
    const region = m ? accounts[decodeURIComponent(m[1]!)] : undefined;
    if (region) return new Response(JSON.stringify({ _id: m![1], region }), { status: 200 });
    return new Response(JSON.stringify({ id: 4, error: 'NotFoundError', message: 'Not found' }), { status: 404 });
  }) as typeof fetch;
  return { asked, fetchImpl };
}

describe('MetaApiHosts', () => {
  it('derives each region hosts from one domain lookup on the provisioning host, as the SDK does', async () => {
    const p = provisioning();
    const h = new MetaApiHosts({ provisioningUrl: PROV, token: 'tok', fetch: p.fetchImpl });
    const [ny, london, stream] = await Promise.all([
      h.clientApi('new-york'),
      h.clientApi('london'),
      h.stream('london'),
    ]);
    expect(ny).toBe('https://mt-client-api-v1.new-york.agiliumtrade.ai');
    expect(london).toBe('https://mt-client-api-v1.london.agiliumtrade.ai');
    expect(stream).toBe('https://mt-client-api-v1.london-a.agiliumtrade.ai');
    // Three concurrent resolutions, one lookup, on the provisioning host.
    expect(p.asked).toEqual([`${PROV}/users/current/servers/mt-client-api`]);
  });

  it('trusts the lookup for its TTL only', async () => {
    const p = provisioning();
    const clock = { ms: 0 };
    const h = new MetaApiHosts({ provisioningUrl: PROV, token: 'tok', fetch: p.fetchImpl, now: () => clock.ms });
    await h.clientApi('new-york');
    clock.ms = 10 * 60_000 - 1;
    await h.clientApi('london');
    expect(p.asked).toHaveLength(1);
    clock.ms = 10 * 60_000;
    await h.clientApi('london');
    expect(p.asked).toHaveLength(2);
  });

  it('reads an account region from its provisioning record, once', async () => {
    const p = provisioning({ a1: 'london' });
    const h = new MetaApiHosts({ provisioningUrl: PROV, token: 'tok', fetch: p.fetchImpl });
    expect(await h.regionOf('a1')).toBe('london');
    expect(await h.regionOf('a1')).toBe('london');
    expect(p.asked).toEqual([`${PROV}/users/current/accounts/a1`]);
    await expect(h.regionOf('nope')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('uses overrides before the derivation: per region first, then every region; no lookup needed', async () => {
    const p = provisioning();
    const h = new MetaApiHosts({
      provisioningUrl: PROV,
      token: 'tok',
      fetch: p.fetchImpl,
      clientApiUrl: 'https://all.example/',
      streamUrl: 'https://all-stream.example',
      regions: { london: { clientApi: 'https://london.example' }, tokyo: { stream: 'https://tokyo-ws.example' } },
    });
    expect(await h.clientApi('london')).toBe('https://london.example');
    // A region's client-API override also serves its stream unless the region names a stream of its own.
    expect(await h.stream('london')).toBe('https://london.example');
    expect(await h.stream('tokyo')).toBe('https://tokyo-ws.example');
    expect(await h.clientApi('new-york')).toBe('https://all.example');
    expect(await h.stream('new-york')).toBe('https://all-stream.example');
    expect(p.asked).toEqual([]);
  });

  it('maps host names through the host map, and a name it does not list is unknown', async () => {
    const p = provisioning({}, 'sim.invalid');
    const h = new MetaApiHosts({
      provisioningUrl: 'http://127.0.0.1:1000',
      token: 'tok',
      fetch: p.fetchImpl,
      hosts: { 'mt-client-api-v1.london.sim.invalid': 'http://127.0.0.1:2000' },
    });
    expect(await h.clientApi('london')).toBe('http://127.0.0.1:2000');
    await expect(h.clientApi('new-york')).rejects.toThrow(/mt-client-api-v1\.new-york\.sim\.invalid is unknown/);
  });

  it('reads per-region overrides from the environment (NEW_YORK is new-york)', () => {
    expect(
      metaApiRegionOverrides({
        COPYTRADE_PLATFORMA_CLIENT_API_URL_NEW_YORK: 'https://ny.example',
        COPYTRADE_PLATFORMA_STREAM_URL_NEW_YORK: 'https://ny-ws.example',
        COPYTRADE_PLATFORMA_CLIENT_API_URL_LONDON: 'https://ldn.example',
        COPYTRADE_PLATFORMA_CLIENT_API_URL: 'https://all.example',
      }),
    ).toEqual({
      'new-york': { clientApi: 'https://ny.example', stream: 'https://ny-ws.example' },
      london: { clientApi: 'https://ldn.example' },
    });
  });
});
