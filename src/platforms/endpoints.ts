import type { CTraderEndpoint } from './ctrader/connection.js';
import type { MetaApiRegionOverride } from './metatrader/hosts.js';

/**
 * Where each platform's servers are. In demo mode and tests they are the simulator's loopback front ends;
 * in production the real hosts (configurable, since brokers run white-label copies of these platforms).
 */
export interface PlatformEndpoints {
  platformb: { baseUrl(environment: 'demo' | 'live'): string };
  platformc: {
    endpoint(environment: 'demo' | 'live'): CTraderEndpoint;
    oauthBaseUrl: string;
    clientId: string;
    clientSecret: string;
  };
  platforma: MetaApiEndpoints;
  /**
   * Platform D (DXtrade): every broker runs its own server, so the REST base comes from the server the user
   * typed (`<server>/dxsca-web`); demo mode and tests answer the simulator whatever was typed.
   */
  platformd: { baseUrl(server: string, environment: 'demo' | 'live'): string };
}

/**
 * The REST base of a DXtrade server the user typed. Only an https URL (or a bare host name) of a named host is
 * taken, so a connect request cannot make the service call a loopback, private or link-local address by number
 * (a name that resolves to one is not caught here: see docs/open-points.md). `COPYTRADE_PLATFORMD_URL` replaces
 * every server (a gateway in front of all DXtrade brokers).
 */
export function dxBaseUrl(server: string): string {
  const override = process.env.COPYTRADE_PLATFORMD_URL;
  if (override) return override.replace(/\/+$/, '');
  const typed = server.trim();
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(typed) ? typed : `https://${typed}`);
  } catch {
    throw new Error(`not a server address: ${typed}`);
  }
  const host = url.hostname;
  if (url.protocol !== 'https:') throw new Error('the DXtrade server must be an https address');
  if (url.username || url.password) throw new Error('the DXtrade server address must not carry credentials');
  if (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^[\d.]+$/.test(host) ||
    host.includes(':') ||
    host.startsWith('[')
  )
    throw new Error('the DXtrade server must be a host name, not an address');
  if (!host.includes('.')) throw new Error('the DXtrade server must be a full host name');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}/dxsca-web`.replace(/\/dxsca-web\/dxsca-web$/, '/dxsca-web');
}

/** Platform A (MetaApi): the provisioning base, and how account hosts are found (see metatrader/hosts.ts). */
export interface MetaApiEndpoints {
  baseUrl: string;
  token: string;
  /** Client API (REST and streaming) of every region instead of the derived hosts. */
  clientApiUrl?: string;
  /** Streaming of every region instead of the derived hosts. */
  streamUrl?: string;
  /** Per-region overrides. */
  regions?: Record<string, MetaApiRegionOverride>;
  /** Host name -> base URL in place of DNS (the simulator's loopback ports). */
  hosts?: Record<string, string>;
}

/**
 * Per-region overrides from `COPYTRADE_PLATFORMA_CLIENT_API_URL_<REGION>` and `COPYTRADE_PLATFORMA_STREAM_URL_<REGION>`,
 * the region upper-cased with `-` as `_` (new-york -> NEW_YORK).
 */
export function metaApiRegionOverrides(env: NodeJS.ProcessEnv): Record<string, MetaApiRegionOverride> {
  const out: Record<string, MetaApiRegionOverride> = {};
  for (const [k, v] of Object.entries(env)) {
    const m = /^COPYTRADE_PLATFORMA_(CLIENT_API|STREAM)_URL_([A-Z0-9_]+)$/.exec(k);
    if (!m || !v) continue;
    const region = m[2]!.toLowerCase().replace(/_/g, '-');
    const r = (out[region] ??= {});
    if (m[1] === 'CLIENT_API') r.clientApi = v;
    else r.stream = v;
  }
  return out;
}

const env = (k: string, d: string) => process.env[k] || d;

/** Real upstreams, from the fact sheets; credentials of our application at each come from the environment. */
export function realEndpoints(): PlatformEndpoints {
  return {
    platformb: {
      baseUrl: (e) =>
        e === 'live'
          ? env('COPYTRADE_PLATFORMB_LIVE_URL', 'https://live.tradelocker.com/backend-api')
          : env('COPYTRADE_PLATFORMB_DEMO_URL', 'https://demo.tradelocker.com/backend-api'),
    },
    platformc: {
      endpoint: (e) => ({
        host:
          e === 'live'
            ? env('COPYTRADE_PLATFORMC_LIVE_HOST', 'live.ctraderapi.com')
            : env('COPYTRADE_PLATFORMC_DEMO_HOST', 'demo.ctraderapi.com'),
        port: Number(env('COPYTRADE_PLATFORMC_PORT', '5035')),
      }),
      oauthBaseUrl: env('COPYTRADE_PLATFORMC_OAUTH_URL', 'https://openapi.ctrader.com'),
      clientId: env('COPYTRADE_PLATFORMC_CLIENT_ID', ''),
      clientSecret: env('COPYTRADE_PLATFORMC_CLIENT_SECRET', ''),
    },
    platformd: { baseUrl: (server) => dxBaseUrl(server) },
    platforma: {
      baseUrl: env('COPYTRADE_PLATFORMA_URL', 'https://mt-provisioning-api-v1.agiliumtrade.agiliumtrade.ai'),
      token: env('COPYTRADE_PLATFORMA_TOKEN', ''),
      ...(process.env.COPYTRADE_PLATFORMA_CLIENT_API_URL
        ? { clientApiUrl: process.env.COPYTRADE_PLATFORMA_CLIENT_API_URL }
        : {}),
      ...(process.env.COPYTRADE_PLATFORMA_STREAM_URL ? { streamUrl: process.env.COPYTRADE_PLATFORMA_STREAM_URL } : {}),
      regions: metaApiRegionOverrides(process.env),
    },
  };
}
