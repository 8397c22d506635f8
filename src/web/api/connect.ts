import { api, app, must } from './client';
import type { Body, Ok, TestedAccount } from './types';

/**
 * The account-connection routes (family R, access token), typed from the OpenAPI document. The connect*
 * operations count toward the per-user limit of 3 connection requests per 5 minutes (429 with Retry-After);
 * the server search and the platform C connection state do not.
 */

// Platform A: broker server (searched per terminal, MT4 or MT5) + login + trading password.
export type MtPlatform = 'mt4' | 'mt5';
export type PlatformAServerGroup = Ok<'/api/connect/platforma/servers', 'get'>['servers'][number];
export const searchPlatformAServers = (query: string, platform: MtPlatform) =>
  must(api.GET('/api/connect/platforma/servers', { params: { query: { query, platform } } }));
export const connectPlatformA = (body: Body<'/api/connect/platforma', 'post'>): Promise<TestedAccount> =>
  must(api.POST('/api/connect/platforma', { body }));

// Platform B: environment + server + email + password; pick one of the returned accounts and verify its number.
export type PlatformDAccount = Ok<'/api/connect/platformd/discover', 'post'>['accounts'][number];
export const discoverPlatformD = (body: Body<'/api/connect/platformd/discover', 'post'>) =>
  must(api.POST('/api/connect/platformd/discover', { body }));
export const confirmPlatformD = (body: Body<'/api/connect/platformd/confirm', 'post'>): Promise<TestedAccount> =>
  must(api.POST('/api/connect/platformd/confirm', { body }));
export type PlatformBAccount = Ok<'/api/connect/platformb/discover', 'post'>['accounts'][number];
export const discoverPlatformB = (body: Body<'/api/connect/platformb/discover', 'post'>) =>
  must(api.POST('/api/connect/platformb/discover', { body }));
export const confirmPlatformB = (body: Body<'/api/connect/platformb/confirm', 'post'>): Promise<TestedAccount> =>
  must(api.POST('/api/connect/platformb/confirm', { body }));

// Platform C: OAuth in a popup, then pick the returned account and verify account and environment.
export type PlatformCConnection = Ok<'/api/connect/platformc/connections/{connection_id}', 'get'>;
export type PlatformCAccount = PlatformCConnection['accounts'][number];
export const startPlatformC = () => must(api.POST('/api/connect/platformc/start', { body: {} }));
export const platformCConnection = (connectionId: string) =>
  must(
    api.GET('/api/connect/platformc/connections/{connection_id}', {
      params: { path: { connection_id: connectionId } },
    }),
  );
export const confirmPlatformC = (body: Body<'/api/connect/platformc/confirm', 'post'>): Promise<TestedAccount> =>
  must(api.POST('/api/connect/platformc/confirm', { body }));

/** What the authorization popup posts to its opener when it ends on /api/connect/platformc/callback. */
export interface PlatformCMessage {
  type: 'copytrade:platformc';
  connectionId: string | null;
  ok: boolean;
  error?: string;
}
export const isPlatformCMessage = (d: unknown): d is PlatformCMessage =>
  !!d && typeof d === 'object' && (d as { type?: unknown }).type === 'copytrade:platformc';

/** Reads the account at its broker again (funds, positions, orders, trading allowed); a pass makes it assignable. */
export const runConnectionTest = (accountId: string): Promise<TestedAccount> =>
  must(app.POST('/v1/accounts/{account_id}/connection-test', { params: { path: { account_id: accountId } } }));

// Platform A, self-hosted: an EA in the user's own terminal dials the service's bridge (docs/bridge-protocol.md).
export type BridgeCreated = Ok<'/api/connect/platforma/bridge', 'post'>;
export type BridgeStatus = Ok<'/api/connect/platforma/bridge/{account_id}', 'get'>;
export const connectPlatformABridge = (body: Body<'/api/connect/platforma/bridge', 'post'>): Promise<BridgeCreated> =>
  must(api.POST('/api/connect/platforma/bridge', { body }));
/** The EA's hello and heartbeat; a 404 for an account not connected through the bridge. */
export const platformABridgeStatus = (accountId: string): Promise<BridgeStatus> =>
  must(api.GET('/api/connect/platforma/bridge/{account_id}', { params: { path: { account_id: accountId } } }));
