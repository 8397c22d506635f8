import { AppError } from '../../domain/errors.js';

/**
 * Where each MetaApi call goes, as the official SDK decides it (metaapi.cloud-sdk 29.x):
 *
 * - account CRUD, server search and the domain lookup go to the provisioning host (our configured base URL);
 * - the domain lookup `GET /users/current/servers/mt-client-api` answers `{domain, hostname}`, cached 10 minutes
 *   (lib/clients/domain.client.ts `_updateDomain`);
 * - an account's REST client API is `https://mt-client-api-v1.<region>.<domain>` (lib/clients/metaApi/
 *   clientApi.client.ts: `DomainClient.getUrl('https://mt-client-api-v1', region)`);
 * - its streaming (socket.io) host is `https://<hostname>.<region>-a.<domain>` for instance index 0
 *   (lib/clients/metaApi/metaApiWebsocket.client.ts `getUrlSettings`);
 * - the region is the account's own `region` field (provisioning account DTO).
 *
 * Overrides win over the derivation: one for every region (COPYTRADE_PLATFORMA_CLIENT_API_URL, _STREAM_URL), or
 * per region (the same names suffixed with the region, see platforms/endpoints.ts).
 * `hosts` maps host names to base URLs in place of DNS (the simulator's loopback ports); with it, a host name it
 * does not list is unknown, as an unresolvable name would be.
 */

export interface MetaApiRegionOverride {
  /** REST client API base of the region. */
  clientApi?: string;
  /** Streaming base of the region (socket.io at `/ws`); defaults to the region's clientApi override when set. */
  stream?: string;
}

export interface MetaApiHostsOptions {
  provisioningUrl: string;
  token: string;
  /** Client API (REST and streaming) of every region; per-region overrides win over it. */
  clientApiUrl?: string;
  /** Streaming of every region (defaults to clientApiUrl when that is set); per-region overrides win over it. */
  streamUrl?: string;
  regions?: Record<string, MetaApiRegionOverride>;
  hosts?: Record<string, string>;
  /** How long a domain lookup is trusted (the SDK's 10 minutes). */
  ttlMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export interface DomainSettings {
  domain: string;
  hostname: string;
}

const TEN_MINUTES = 10 * 60_000;
const trim = (u: string) => u.replace(/\/+$/, '');

export class MetaApiHosts {
  private settingsCache: { value: DomainSettings; at: number } | null = null;
  private inflight: Promise<DomainSettings> | null = null;
  private readonly regionCache = new Map<string, { value: string; at: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: MetaApiHostsOptions) {
    this.now = opts.now ?? Date.now;
  }

  get provisioningUrl(): string {
    return this.mapUrl(trim(this.opts.provisioningUrl));
  }

  /** REST client-API base of a region. */
  async clientApi(region: string): Promise<string> {
    const o = this.opts.regions?.[region]?.clientApi ?? this.opts.clientApiUrl;
    if (o) return trim(o);
    const s = await this.settings();
    return this.mapUrl(`https://mt-client-api-v1.${region}.${s.domain}`);
  }

  /** Streaming base of a region (instance index 0). */
  async stream(region: string): Promise<string> {
    const r = this.opts.regions?.[region];
    const o = r?.stream ?? r?.clientApi ?? this.opts.streamUrl ?? this.opts.clientApiUrl;
    if (o) return trim(o);
    const s = await this.settings();
    return this.mapUrl(`https://${s.hostname || 'mt-client-api-v1'}.${region}-a.${s.domain}`);
  }

  /** An account's region from its provisioning record; cached like the domain, since it rarely changes. */
  async regionOf(accountId: string): Promise<string> {
    const hit = this.regionCache.get(accountId);
    if (hit && this.now() - hit.at < (this.opts.ttlMs ?? TEN_MINUTES)) return hit.value;
    const body = await this.get(`/users/current/accounts/${encodeURIComponent(accountId)}`, 'account');
    const region = (body as { region?: unknown }).region;
    if (typeof region !== 'string' || region === '')
      throw new AppError('upstream_error', `MetaApi account ${accountId} has no region`);
    this.regionCache.set(accountId, { value: region, at: this.now() });
    return region;
  }

  /** The domain lookup, one request at a time, trusted for ttlMs. */
  settings(): Promise<DomainSettings> {
    const c = this.settingsCache;
    if (c && this.now() - c.at < (this.opts.ttlMs ?? TEN_MINUTES)) return Promise.resolve(c.value);
    this.inflight ??= this.get('/users/current/servers/mt-client-api', 'domain lookup')
      .then((b) => {
        const { domain, hostname } = b as { domain?: unknown; hostname?: unknown };
        if (typeof domain !== 'string' || domain === '')
          throw new AppError('upstream_error', 'MetaApi domain lookup answered no domain');
        const value = { domain, hostname: typeof hostname === 'string' ? hostname : '' };
        this.settingsCache = { value, at: this.now() };
        return value;
      })
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }

  /** Applies the host map: the URL's host name becomes the mapped base (scheme, host and port). */
  mapUrl(url: string): string {
    const hosts = this.opts.hosts;
    if (!hosts) return url;
    const u = new URL(url);
    const base = hosts[u.hostname];
    if (base) return trim(base) + (u.pathname === '/' ? '' : u.pathname) + u.search;
    // Loopback URLs (the simulator's own base) pass; any other name is unknown, as NXDOMAIN would be.
    if (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]') return url;
    throw new AppError('upstream_unavailable', `MetaApi host ${u.hostname} is unknown`, { retryable: true });
  }

  private async get(path: string, what: string): Promise<unknown> {
    const res = await (this.opts.fetch ?? fetch)(this.provisioningUrl + path, {
      headers: { 'auth-token': this.opts.token },
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
    }).catch((err: unknown) => {
      throw new AppError('upstream_unavailable', `MetaApi ${what} failed: ${(err as Error).message}`, {
        retryable: true,
      });
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new AppError(
        res.status === 404 ? 'not_found' : res.status === 401 ? 'broker_auth_failed' : 'upstream_error',
        `MetaApi ${what}: HTTP ${res.status}`,
        { retryable: res.status >= 500 || res.status === 429 },
      );
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new AppError('upstream_error', `MetaApi ${what}: unreadable answer`);
    }
  }
}
