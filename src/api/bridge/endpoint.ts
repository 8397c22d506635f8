import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Account } from '../../domain/account.js';
import type { BridgeHub } from '../../platforms/bridge/hub.js';
import { MAX_MESSAGE_BYTES } from '../../protocols/bridge/validate.js';
import { BRIDGE_POLL_PATH, BridgePollServer, POLL_DEFAULTS, type PollOptions } from './poll.js';
import { perMinuteLimiter } from './rate-window.js';

export const BRIDGE_WS_PATH = '/bridge/v1/ws';

export interface BridgeEndpointDeps {
  hub: BridgeHub;
  /** The account a bridge token opens (bridge-tokens.ts `verify`). */
  verify(token: string): Promise<{ tokenId: string; accountId: string } | null>;
  /** The login of a bridge account, or null when it is not one (removed, or not connected through the bridge). */
  loginOf(accountId: string): Promise<string | null>;
  /** Upgrades allowed per client address per minute. */
  upgradesPerMinute?: number;
  /** MT4 polls allowed per token per minute (a busy EA polls several times a second). */
  pollsPerMinute?: number;
  /** MT4 polls refused for their token allowed per client address per minute; past it, 429 before any lookup. */
  refusedPollsPerMinute?: number;
  poll?: Partial<PollOptions>;
  now?: () => number;
}

type Caller = { tokenId: string; accountId: string; login: string };
type Refusal = { status: number; code: string; message: string; retryAfter?: number };
/** Rate limits of one kind of request: before the token lookup (by address), on a refusal, after (by token). */
type Gate = {
  before(ip: string): number | null;
  refused(ip: string): void;
  after(tokenId: string): number | null;
};
const limited = (message: string, retryAfter: number): Refusal => ({
  status: 429,
  code: 'rate_limited',
  message,
  retryAfter,
});

/**
 * The terminal bridge's endpoint on the API listener (docs/bridge-protocol.md): MT5's WebSocket and MT4's long
 * polls. The token is checked before anything else (401, nothing said about the account), connects and polls are
 * rate limited per address (429 with Retry-After), and each connection is handed to the hub as a session.
 * Binary frames are not the protocol. Requests outside /bridge/ go to the listener's own handler (the API).
 */
export function attachBridgeEndpoint(server: Server, deps: BridgeEndpointDeps): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const now = deps.now ?? Date.now;
  const upgrades = perMinuteLimiter(deps.upgradesPerMinute ?? 30, now);
  const polls = perMinuteLimiter(deps.pollsPerMinute ?? 1200, now);
  const refusedPolls = perMinuteLimiter(deps.refusedPollsPerMinute ?? 30, now);
  const poller = new BridgePollServer(deps.hub, { ...POLL_DEFAULTS, ...deps.poll }, now);
  // Upgrades are few: counted per address before the token is looked at. Polls are many, and many EAs may share
  // one address (a proxy, an office): counted per token once it is known good; an address is stopped before the
  // lookup only by its refused polls.
  const upgradeGate: Gate = { before: (ip) => upgrades.hit(ip), refused: () => {}, after: () => null };
  const pollGate: Gate = {
    before: (ip) => refusedPolls.over(ip),
    refused: (ip) => void refusedPolls.hit(ip),
    after: (tokenId) => polls.hit(tokenId),
  };

  const admit = async (req: IncomingMessage, gate: Gate): Promise<Caller | Refusal> => {
    const ip = req.socket.remoteAddress ?? '?';
    const early = gate.before(ip);
    if (early !== null) return limited('too many bridge requests from this address', early);
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const who = token ? await deps.verify(token) : null;
    const login = who ? await deps.loginOf(who.accountId) : null;
    if (!who || !login) {
      gate.refused(ip);
      return {
        status: 401,
        code: 'bridge_token_invalid',
        message: 'the bridge token is missing, unknown, rotated out or revoked',
      };
    }
    const late = gate.after(who.tokenId);
    if (late !== null) return limited('too many polls with this bridge token', late);
    return { tokenId: who.tokenId, accountId: who.accountId, login };
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!path.startsWith('/bridge/')) return;
    void (async () => {
      if (path !== BRIDGE_WS_PATH)
        return refuse(socket, { status: 404, code: 'not_found', message: `no bridge endpoint at ${path}` });
      const who = await admit(req, upgradeGate);
      if ('status' in who) return refuse(socket, who);
      wss.handleUpgrade(req, socket, head, (ws) => {
        const session = deps.hub.open(
          { send: (text) => ws.send(text), close: (code, reason) => ws.close(code, reason) },
          { id: who.accountId, login: who.login, tokenId: who.tokenId },
        );
        ws.on('message', (data, binary) => {
          if (binary) return session.refuse('malformed_json', 'binary frames are not part of the protocol', true);
          session.onFrame(String(data));
        });
        ws.on('close', () => session.onClose());
        ws.on('error', () => ws.terminate());
      });
    })().catch(() => refuse(socket, UNAVAILABLE));
  };

  const onPoll = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST')
      return reply(res, { status: 405, code: 'method_not_allowed', message: `${BRIDGE_POLL_PATH} takes POST` });
    const who = await admit(req, pollGate);
    if ('status' in who) return reply(res, who);
    await poller.handle(req, res, who);
  };

  // The API's own request handlers run for everything but the poll path (which Fastify never sees, as it never
  // sees the upgrade).
  const api = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? '').split('?')[0] !== BRIDGE_POLL_PATH) for (const l of api) l.call(server, req, res);
    else onPoll(req, res).catch(() => reply(res, UNAVAILABLE));
  };
  server.removeAllListeners('request');
  server.on('request', onRequest);
  server.on('upgrade', onUpgrade);
  return {
    close() {
      server.off('upgrade', onUpgrade);
      server.off('request', onRequest);
      for (const l of api) server.on('request', l);
      poller.close();
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}

const UNAVAILABLE: Refusal = {
  status: 503,
  code: 'upstream_unavailable',
  message: 'the bridge could not check the token now',
};
const REASONS: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function reply(res: ServerResponse, r: Refusal): void {
  if (res.headersSent) return void res.end();
  const body = JSON.stringify({ code: r.code, error: r.message });
  res.writeHead(r.status, {
    'content-type': 'application/json',
    ...(r.retryAfter !== undefined ? { 'retry-after': String(r.retryAfter) } : {}),
    ...(r.status === 405 ? { allow: 'POST' } : {}),
  });
  res.end(body);
}

function refuse(socket: Duplex, r: Refusal): void {
  const body = JSON.stringify({ code: r.code, error: r.message });
  socket.end(
    `HTTP/1.1 ${r.status} ${REASONS[r.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${r.retryAfter !== undefined ? `Retry-After: ${r.retryAfter}\r\n` : ''}Connection: close\r\n\r\n${body}`,
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
