/** Per-user quotas (env COPYTRADE_QUOTA_*; 0 = no limit). Our numbers, not the spec's: see docs/open-points.md. */
export interface QuotaConfig {
  copierGroups: number;
  apiKeys: number;
  webhookEndpoints: number;
  accounts: number;
  /** Open event streams (GET /v1/events/stream) per API key or access token, per process. */
  eventStreamsPerKey: number;
}

export const DEFAULT_QUOTAS: QuotaConfig = {
  copierGroups: 50,
  apiKeys: 20,
  webhookEndpoints: 20,
  accounts: 100,
  eventStreamsPerKey: 5,
};

const ENV: Record<keyof QuotaConfig, string> = {
  copierGroups: 'COPYTRADE_QUOTA_COPIER_GROUPS',
  apiKeys: 'COPYTRADE_QUOTA_API_KEYS',
  webhookEndpoints: 'COPYTRADE_QUOTA_WEBHOOK_ENDPOINTS',
  accounts: 'COPYTRADE_QUOTA_ACCOUNTS',
  eventStreamsPerKey: 'COPYTRADE_QUOTA_EVENT_STREAMS_PER_KEY',
};

export function loadQuotaConfig(env: NodeJS.ProcessEnv): QuotaConfig {
  const out = { ...DEFAULT_QUOTAS };
  for (const [k, name] of Object.entries(ENV) as Array<[keyof QuotaConfig, string]>) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`${name} must be a non-negative integer (0 = no limit), got ${JSON.stringify(v)}`);
    out[k] = n;
  }
  return out;
}
