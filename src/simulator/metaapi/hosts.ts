import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * MetaApi's host names and roles, as the official SDK builds them (metaapi.cloud-sdk 29.x,
 * lib/clients/domain.client.ts and lib/clients/metaApi/metaApiWebsocket.client.ts `getUrlSettings`):
 *
 * - provisioning:  `mt-provisioning-api-v1.<domain>` (account CRUD, server search and the domain lookup
 *   `GET /users/current/servers/mt-client-api` -> `{domain, hostname}`);
 * - client API (REST), one per region: `mt-client-api-v1.<region>.<domain>`;
 * - streaming (socket.io at `/ws`), one per region and instance: `<hostname>.<region>-<a|b>.<domain>`
 *   (instance index 0 is `a`).
 *
 * The simulator serves each role on its own loopback port; `hosts` maps every host name it plays to that port,
 * which is what a resolver (or the adapter's host map) uses in place of DNS.
 */

export const SIM_DOMAIN = 'metaapi-sim.invalid';
/** What the domain lookup answers as `hostname`: the SDK's shared client-API host name. */
export const SIM_STREAM_HOSTNAME = 'mt-client-api-v1';
export const SIM_REGIONS = ['new-york', 'london'] as const;

export const provisioningHost = (domain: string) => `mt-provisioning-api-v1.${domain}`;
export const clientApiHost = (region: string, domain: string) => `mt-client-api-v1.${region}.${domain}`;
export const streamHost = (hostname: string, region: string, instance: number, domain: string) =>
  `${hostname}.${region}-${String.fromCharCode(97 + instance)}.${domain}`;

export interface Listening {
  server: Server;
  url: string;
}

export async function listenOn(
  host: string,
  port: number,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Listening> {
  const server = createServer(handler);
  // Clients time out and come back; an idle keep-alive socket must not keep close() waiting.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${h}:${addr.port}` };
}

export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
