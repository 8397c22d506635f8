import { AppError } from '../../domain/errors.js';
import type { AdapterFactory, BrokerAdapter } from '../adapter.js';
import { BridgeAdapter } from './adapter.js';
import { bridgeCapabilities } from './capabilities.js';
import type { BridgeHub } from './hub.js';

/** Stored credentials of a platform A account connected through the terminal bridge (no secret: the token is hashed elsewhere). */
export interface BridgeCredentials {
  connection: 'bridge';
  login: string;
  server: string;
}

export const isBridgeCredentials = (
  c: Record<string, unknown> | null,
): c is Record<string, unknown> & BridgeCredentials => c?.['connection'] === 'bridge';

export function createBridgeAdapterFactory(opts: { hub: BridgeHub; timeoutMs: number }): AdapterFactory {
  return {
    platform: 'platforma',
    capabilities: bridgeCapabilities(true),
    async create(account) {
      const c = account.credentials;
      if (!isBridgeCredentials(c) || typeof c.login !== 'string')
        throw new AppError('internal_error', `account ${account.id} has no terminal bridge login`);
      return new BridgeAdapter({
        link: opts.hub.link(account.id, c.login),
        timeoutMs: opts.timeoutMs,
        silentAfterMs: opts.hub.silentAfterMs,
      });
    },
  };
}

/**
 * Platform A's one factory in the registry: an account connected through the terminal bridge gets the bridge
 * adapter, every other one the cloud adapter. The bridge is a connection kind of platform A, not a platform
 * (docs/open-points.md, "Terminal bridge").
 */
export function withBridgeConnections(cloud: AdapterFactory | null, bridge: AdapterFactory): AdapterFactory {
  return {
    platform: 'platforma',
    capabilities: cloud?.capabilities ?? bridge.capabilities,
    create(account): Promise<BrokerAdapter> {
      if (isBridgeCredentials(account.credentials) || !cloud) return bridge.create(account);
      return cloud.create(account);
    },
  };
}
