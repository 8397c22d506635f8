import type { CTraderEndpoint } from './ctrader/connection.js';

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
  platforma: { baseUrl: string; token: string; clientApiUrl?: string };
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
    platforma: {
      baseUrl: env('COPYTRADE_PLATFORMA_URL', 'https://mt-provisioning-api-v1.agiliumtrade.agiliumtrade.ai'),
      token: env('COPYTRADE_PLATFORMA_TOKEN', ''),
      ...(process.env.COPYTRADE_PLATFORMA_CLIENT_API_URL
        ? { clientApiUrl: process.env.COPYTRADE_PLATFORMA_CLIENT_API_URL }
        : {}),
    },
  };
}
