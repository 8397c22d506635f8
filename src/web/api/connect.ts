import { api, http, must } from './client';
import type { Account, Body, Ok } from './types';

/**
 * The account-connection routes (family R, access token). They were being written while the dashboard was,
 * so their shapes here follow the agreed contract; `npm run gen:api` puts them into schema.d.ts once they
 * are served, and these types can then be taken from there. Every call counts toward the per-user limit of
 * 3 connection requests per 5 minutes (429 with Retry-After).
 */
export type Role = 'master' | 'slave';
export interface Placement { groupId?: string; role?: Role }

// Platform A: broker server + login + trading password.
export interface PlatformAServer { name: string; [k: string]: unknown }
export const searchPlatformAServers = (query: string, signal?: AbortSignal) =>
  http<{ servers: Array<PlatformAServer | string> }>('GET', `/api/connect/platforma/servers?query=${encodeURIComponent(query)}`, undefined, signal ? { signal } : undefined);
export const connectPlatformA = (b: { server: string; login: string; password: string; platform: 'mt4' | 'mt5' } & Placement) =>
  http<Account>('POST', '/api/connect/platforma', b);

// Platform B (typed from the OpenAPI document): environment + server + email + password; pick one of the
// returned accounts and verify its number.
export type PlatformBAccount = Ok<'/api/connect/platformb/discover', 'post'>['accounts'][number];
export const discoverPlatformB = (body: Body<'/api/connect/platformb/discover', 'post'>) => must(api.POST('/api/connect/platformb/discover', { body }));
export const confirmPlatformB = (body: Body<'/api/connect/platformb/confirm', 'post'>): Promise<Account> => must(api.POST('/api/connect/platformb/confirm', { body }));

// Platform C: OAuth in a popup, then pick the returned account and verify account and environment.
export interface PlatformCAccount { ctidTraderAccountId: string | number; accountNumber: string | number; environment: string; brokerName: string | null }
export const startPlatformC = (b: { environment?: 'demo' | 'live' }) =>
  http<{ connectionId: string; authorizationUrl: string }>('POST', '/api/connect/platformc/start', b);
export const platformCConnection = (connectionId: string) =>
  http<{ accounts: PlatformCAccount[] }>('GET', `/api/connect/platformc/connections/${encodeURIComponent(connectionId)}`);
export const confirmPlatformC = (b: { connectionId: string; ctidTraderAccountId: string | number; accountNumber: string | number; environment: string } & Placement) =>
  http<Account>('POST', '/api/connect/platformc/confirm', b);

/** What the authorization popup posts to its opener when it ends on /api/connect/platformc/callback. */
export interface PlatformCMessage { type: 'copytrade:platformc'; connectionId: string; ok: boolean; error?: string }
export const isPlatformCMessage = (d: unknown): d is PlatformCMessage =>
  !!d && typeof d === 'object' && (d as { type?: unknown }).type === 'copytrade:platformc' && typeof (d as { connectionId?: unknown }).connectionId === 'string';
