/**
 * Where each platform's servers are. In demo mode and tests they are the simulator's loopback front ends;
 * in production the real hosts (configurable, since brokers run white-label copies of these platforms).
 */
export interface PlatformEndpoints {
  platformb: { baseUrl(environment: 'demo' | 'live'): string };
}

export const REAL_ENDPOINTS: PlatformEndpoints = {
  platformb: {
    baseUrl: (env) => (env === 'live' ? process.env.COPYTRADE_PLATFORMB_LIVE_URL ?? 'https://live.tradelocker.com/backend-api' : process.env.COPYTRADE_PLATFORMB_DEMO_URL ?? 'https://demo.tradelocker.com/backend-api'),
  },
};
