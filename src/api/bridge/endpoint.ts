import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Account } from '../../domain/account.js';
import type { BridgeHub } from '../../platforms/bridge/hub.js';
import { MAX_MESSAGE_BYTES } from '../../protocols/bridge/validate.js';

export const BRIDGE_WS_PATH = '/bridge/v1/ws';

export interface BridgeEndpointDeps {
  hub: BridgeHub;
  /** The account a bridge token opens (bridge-tokens.ts `verify`). */
  verify(token: string): Promise<{ tokenId: string; accountId: string } | null>;
  /** The login of a bridge account, or null when it is not one (removed, or not connected through the bridge). */
  loginOf(accountId: string): Promise<string | null>;
  /** Upgrades allowed per client address per minute. */
  upgradesPerMinute?: number;
  now?: () => number;
}

/**
 * The terminal bridge's WebSocket endpoint on the API listener (docs/bridge-protocol.md): the token is checked
 * before the upgrade (401, nothing said about the account), upgrades are rate limited per address (429 with
 * Retry-After), and each connection is handed to the hub as a session. Binary frames are not the protocol.
 */
export function attachBridgeEndpoint(server: Server, deps: BridgeEndpointDeps): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const now = deps.now ?? Date.now;
  const perMinute = deps.upgradesPerMinute ?? 30;
  const windows = new Map<string, { start: number; count: number }>();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!path.startsWith('/bridge/')) return;
    void (async () => {
      if (path !== BRIDGE_WS_PATH) return refuse(socket, 404, 'not_found', `no bridge endpoint at ${path}`);
      const ip = req.socket.remoteAddress ?? '?';
      const t = now();
      const w = windows.get(ip);
      if (!w || t - w.start >= 60_000) {
        if (windows.size > 10_000) windows.clear();
        windows.set(ip, { start: t, count: 1 });
      } else if (++w.count > perMinute) {
        const retry = Math.ceil((w.start + 60_000 - t) / 1000);
        return refuse(socket, 429, 'rate_limited', 'too many bridge connections from this address', retry);
      }
      const auth = req.headers.authorization ?? '';
      const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
      const who = token ? await deps.verify(token) : null;
      const login = who ? await deps.loginOf(who.accountId) : null;
      if (!who || !login)
        return refuse(
          socket,
          401,
          'bridge_token_invalid',
          'the bridge token is missing, unknown, rotated out or revoked',
        );
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = deps.hub.open(
          { send: (text) => ws.send(text), close: (code, reason) => ws.close(code, reason) },
          { id: who.accountId, login, tokenId: who.tokenId },
        );
        ws.on('message', (data, binary) => {
          if (binary) return session.refuse('malformed_json', 'binary frames are not part of the protocol', true);
          session.onFrame(String(data));
        });
        ws.on('close', () => session.onClose());
        ws.on('error', () => ws.terminate());
      });
    })().catch(() => refuse(socket, 503, 'upstream_unavailable', 'the bridge could not check the token now'));
  };
  server.on('upgrade', onUpgrade);
  return {
    close() {
      server.off('upgrade', onUpgrade);
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}

function refuse(socket: Duplex, status: number, code: string, message: string, retryAfter?: number): void {
  const body = JSON.stringify({ code, error: message });
  const reason = { 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' }[
    status
  ];
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${retryAfter !== undefined ? `Retry-After: ${retryAfter}\r\n` : ''}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * The login a bridge token's account connects with: its broker account number, while the account is a live
 * platform A account (tokens are issued for bridge accounts only; a removed account opens nothing).
 */
export async function bridgeLogin(
  store: { accounts: { byId(id: string): Promise<Account | null> } },
  accountId: string,
): Promise<string | null> {
  const a = await store.accounts.byId(accountId);
  return a && !a.removedAt && a.platform === 'platforma' ? a.brokerAccountId : null;
}
