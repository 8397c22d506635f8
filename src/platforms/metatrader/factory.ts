import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import type { MetaApiEndpoints } from '../endpoints.js';
import { MetaTraderAdapter } from './adapter.js';
import { METATRADER_CAPABILITIES, type MtPlatform } from './capabilities.js';
import { MetaApiGateway } from './gateway.js';
import { type MetaApiRegionOverride, MetaApiHosts } from './hosts.js';
import type { MtStreamState } from './stream-watcher.js';

/**
 * Stored `credentials` of a platform A account (encrypted at rest by the store), as provisionMtAccount returns them:
 *
 *   { metaApiAccountId: string, platform: 'mt4' | 'mt5', server: string, login: string, hedging?: boolean,
 *     region?: string }
 *
 * - metaApiAccountId: the provisioning `_id` every client-API path uses. Falls back to the row's brokerAccountId.
 * - platform: decides how numeric result codes read (MT4 error codes vs MT5 trade return codes).
 * - server, login: for display and re-provisioning; the row's brokerAccountId is normally the login.
 * - hedging: from account-information marginMode at connect time; MT4 is always hedging.
 * - region: the MetaApi region the account lives in (its client-API and streaming hosts); read from the
 *   provisioning record when absent (accounts stored before it was kept).
 * The MT password is not needed to trade: MetaApi holds it after provisioning. The service's MetaApi token is
 * deployment configuration (`opts.token`), never a per-account credential.
 */
export interface MetaTraderCredentials {
  metaApiAccountId: string;
  platform: MtPlatform;
  server: string | null;
  login: string | null;
  hedging: boolean | null;
  region: string | null;
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
    region: str('region'),
  };
}

export interface MetaTraderFactoryOptions {
  /** MetaApi provisioning base: account CRUD and the domain lookup (COPYTRADE_PLATFORMA_URL). */
  baseUrl: string;
  /** Client API (REST and streaming) of every region, instead of the derived hosts. */
  clientApiUrl?: string;
  /** Streaming of every region, instead of the derived hosts. */
  streamUrl?: string;
  /** Per-region overrides of the client-API and streaming bases. */
  regions?: Record<string, MetaApiRegionOverride>;
  /** Host name -> base URL in place of DNS (the simulator's loopback ports). */
  hosts?: Record<string, string>;
  token: string;
  timeoutMs?: number;
  pollIntervalMs?: number;
  /** Master events from MetaApi's streaming API (default), or from REST polls only (false). */
  stream?: boolean;
  /** Told when an account's Master events move between the stream and REST polling (and why). */
  onStreamState?: (accountId: string, state: MtStreamState) => void;
  fetch?: typeof fetch;
}

export function createMetaTraderAdapterFactory(opts: MetaTraderFactoryOptions): AdapterFactory {
  // One resolver for every account: the domain lookup is shared and cached, hosts are per region.
  const hosts = new MetaApiHosts({
    provisioningUrl: opts.baseUrl,
    token: opts.token,
    ...(opts.clientApiUrl ? { clientApiUrl: opts.clientApiUrl } : {}),
    ...(opts.streamUrl ? { streamUrl: opts.streamUrl } : {}),
    ...(opts.regions ? { regions: opts.regions } : {}),
    ...(opts.hosts ? { hosts: opts.hosts } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  return {
    platform: 'platforma',
    capabilities: METATRADER_CAPABILITIES,
    async create(account): Promise<BrokerAdapter> {
      const creds = parseMetaTraderCredentials(account.credentials, account.brokerAccountId);
      const id = creds.metaApiAccountId;
      const region = () => (creds.region ? Promise.resolve(creds.region) : hosts.regionOf(id));
      const gateway = new MetaApiGateway({
        provisioningUrl: hosts.provisioningUrl,
        clientUrl: async () => hosts.clientApi(await region()),
        token: opts.token,
        accountId: id,
        timeoutMs: opts.timeoutMs ?? 10_000,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
      // Lazy: nothing is called here (the stream opens on subscribe), so a MetaApi outage does not stop the service.
      return new MetaTraderAdapter({
        ...(opts.stream !== false
          ? { stream: { clientUrl: async () => hosts.stream(await region()), token: opts.token, accountId: id } }
          : {}),
        gateway,
        platform: creds.platform,
        ...(creds.hedging !== null ? { hedging: creds.hedging } : {}),
        ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
        ...(opts.onStreamState ? { onStreamState: (s: MtStreamState) => opts.onStreamState!(id, s) } : {}),
      });
    },
  };
}

/** The endpoint fields of the factory's options, from the deployment's endpoints (real, demo or simulator). */
export function metaApiFactoryEndpoints(
  e: MetaApiEndpoints,
): Pick<MetaTraderFactoryOptions, 'baseUrl' | 'token' | 'clientApiUrl' | 'streamUrl' | 'regions' | 'hosts'> {
  return {
    baseUrl: e.baseUrl,
    token: e.token,
    ...(e.clientApiUrl ? { clientApiUrl: e.clientApiUrl } : {}),
    ...(e.streamUrl ? { streamUrl: e.streamUrl } : {}),
    ...(e.regions ? { regions: e.regions } : {}),
    ...(e.hosts ? { hosts: e.hosts } : {}),
  };
}
