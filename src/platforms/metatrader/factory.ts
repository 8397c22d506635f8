import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { MetaTraderAdapter } from './adapter.js';
import { METATRADER_CAPABILITIES, type MtPlatform } from './capabilities.js';
import { MetaApiGateway } from './gateway.js';

/**
 * Stored `credentials` of a platform A account (encrypted at rest by the store), as provisionMtAccount returns them:
 *
 *   { metaApiAccountId: string, platform: 'mt4' | 'mt5', server: string, login: string, hedging?: boolean }
 *
 * - metaApiAccountId: the provisioning `_id` every client-API path uses. Falls back to the row's brokerAccountId.
 * - platform: decides how numeric result codes read (MT4 error codes vs MT5 trade return codes).
 * - server, login: for display and re-provisioning; the row's brokerAccountId is normally the login.
 * - hedging: from account-information marginMode at connect time; MT4 is always hedging.
 * The MT password is not needed to trade: MetaApi holds it after provisioning. The service's MetaApi token is
 * deployment configuration (`opts.token`), never a per-account credential.
 */
export interface MetaTraderCredentials {
  metaApiAccountId: string;
  platform: MtPlatform;
  server: string | null;
  login: string | null;
  hedging: boolean | null;
}

export function parseMetaTraderCredentials(
  raw: Record<string, unknown> | null,
  brokerAccountId: string,
): MetaTraderCredentials {
  const c = raw ?? {};
  const str = (k: string) =>
    typeof c[k] === 'string' && (c[k] as string).trim() !== '' ? (c[k] as string).trim() : null;
  const metaApiAccountId = str('metaApiAccountId') ?? (brokerAccountId || null);
  const platform = c.platform === 'mt4' || c.platform === 'mt5' ? c.platform : null;
  const missing = [!metaApiAccountId && 'metaApiAccountId', !platform && 'platform'].filter(Boolean);
  if (missing.length > 0) throw new AppError('invalid_request', `MetaTrader credentials lack ${missing.join(', ')}`);
  return {
    metaApiAccountId: metaApiAccountId!,
    platform: platform!,
    server: str('server'),
    login: str('login'),
    hedging: typeof c.hedging === 'boolean' ? c.hedging : null,
  };
}

export function createMetaTraderAdapterFactory(opts: {
  /** MetaApi provisioning base (or the simulator's base, which serves both APIs). */
  baseUrl: string;
  /** Client API base (regional in real MetaApi); defaults to baseUrl. */
  clientApiUrl?: string;
  token: string;
  timeoutMs?: number;
  pollIntervalMs?: number;
  /** Master events from MetaApi's streaming API (default), or from REST polls only (false). */
  stream?: boolean;
  fetch?: typeof fetch;
}): AdapterFactory {
  return {
    platform: 'platforma',
    capabilities: METATRADER_CAPABILITIES,
    async create(account): Promise<BrokerAdapter> {
      const creds = parseMetaTraderCredentials(account.credentials, account.brokerAccountId);
      const clientUrl = opts.clientApiUrl ?? opts.baseUrl;
      const gateway = new MetaApiGateway({
        provisioningUrl: opts.baseUrl,
        clientUrl,
        token: opts.token,
        accountId: creds.metaApiAccountId,
        timeoutMs: opts.timeoutMs ?? 10_000,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
      // Lazy: nothing is called here (the stream opens on subscribe), so a MetaApi outage does not stop the service.
      return new MetaTraderAdapter({
        ...(opts.stream !== false
          ? { stream: { clientUrl, token: opts.token, accountId: creds.metaApiAccountId } }
          : {}),
        gateway,
        platform: creds.platform,
        ...(creds.hedging !== null ? { hedging: creds.hedging } : {}),
        ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
      });
    },
  };
}
