import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ActiveFault, SimBrokerApi } from '../contract.js';
import { HeldSockets, readJsonObject } from '../http-common.js';
import { type DxAcct, DxHttpError, DxRoutes, type Reply, type RouteCtx } from './routes.js';

export interface DxSimOptions {
  host?: string;
  port?: number;
  /** Session lifetime after the last request, in ms (served as the login answer's `timeout`). */
  sessionTimeoutMs?: number;
  /** Serve only accounts whose meta.environment matches (one server per environment). */
  environment?: 'demo' | 'live';
  /** How long a "never answered" request is held before its socket is destroyed (fault delayMs wins). */
  holdMs?: number;
  now?: () => number;
}

export interface DxSimServer {
  /** Ends with /dxsca-web. */
  baseUrl: string;
  close(): Promise<void>;
}

const PREFIX = '/dxsca-web';
const NOT_FOUND = new Set(['POSITION_NOT_FOUND', 'ORDER_NOT_FOUND', 'UNKNOWN_ACCOUNT']);
/** Our numbers for the order checks the spec lists as 409 with "<various>" codes. */
const CHECK_CODES: Record<string, string> = {
  INVALID_VOLUME: '40',
  INVALID_PRICE: '41',
  INVALID_STOPS: '42',
  NOT_ENOUGH_MONEY: '43',
  MARKET_CLOSED: '44',
  REJECTED: '45',
  UNKNOWN_SYMBOL: '46',
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const err = (status: number, errorCode: string, description: string): Reply => ({
  status,
  body: { errorCode, description },
});

function send(res: ServerResponse, reply: Reply, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(reply.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(reply.body ?? {}));
}

function replyForError(e: unknown): Reply {
  if (e instanceof DxHttpError) return err(e.status, e.errorCode, e.message);
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string' && NOT_FOUND.has(code)) return err(404, '2', 'Entity not found at server');
  if (typeof code === 'string' && CHECK_CODES[code])
    return err(409, CHECK_CODES[code]!, `${code}: ${(e as Error).message}`);
  return err(500, '0', 'Internal server error');
}

const userOf = (a: { meta: Record<string, string> }) => `${a.meta.username ?? ''}@${a.meta.domain ?? 'default'}`;
const codeOf = (a: { login: string; meta: Record<string, string> }) => `${a.meta.clearing ?? 'default'}:${a.login}`;

/**
 * The DX REST API (docs/platforms/platform-d-dxtrade.md) over a simulated broker on loopback: POST /login to a
 * session token sent as `Authorization: DXAPI <token>`, dying `timeout` ms after the last request unless pinged;
 * errors as `{errorCode, description}` with the spec's statuses; list answers wrapped in a named field. Faults come
 * from `broker.faults`, as for every front end.
 */
export async function startDxTradeSimServer(broker: SimBrokerApi, opts: DxSimOptions = {}): Promise<DxSimServer> {
  const now = opts.now ?? Date.now;
  const timeoutMs = opts.sessionTimeoutMs ?? 30 * 60_000;
  const sessions = new Map<string, { user: string; lastUse: number }>();
  const routes = new DxRoutes(broker);
  const held = new HeldSockets(opts.holdMs ?? 30_000);
  const served = () =>
    broker.accounts().filter((a) => a.meta.username && (!opts.environment || a.meta.environment === opts.environment));
  const accountsOf = (user: string) => served().filter((a) => userOf(a) === user);

  const session = (req: IncomingMessage): { token: string; user: string } | null => {
    const h = req.headers.authorization;
    if (!h?.startsWith('DXAPI ')) return null;
    const token = h.slice(6).trim();
    const s = sessions.get(token);
    if (!s || now() - s.lastUse > timeoutMs) {
      sessions.delete(token);
      return null;
    }
    s.lastUse = now();
    return { token, user: s.user };
  };

  /** A fault that short-circuits the request; true when it is finished (or abandoned). */
  const shortCircuit = (req: IncomingMessage, res: ServerResponse, f: ActiveFault, token: string | null) => {
    switch (f.kind) {
      case 'reset':
      case 'disconnect':
        req.socket.destroy();
        return true;
      case 'timeout_before_apply':
        held.hold(req, f);
        return true;
      case 'rate_limit':
        send(res, err(429, '0', f.message ?? 'Too many requests'), { 'retry-after': String(f.retryAfterSec ?? 1) });
        return true;
      case 'token_expired':
      case 'token_invalidated':
        if (token) sessions.delete(token);
        send(res, err(401, '1', f.message ?? 'Session expired'));
        return true;
      case 'reject':
        send(res, err(409, CHECK_CODES.REJECTED!, f.message ?? 'REJECTED: order rejected by the broker'));
        return true;
      default:
        return false;
    }
  };

  async function handle(path: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonObject(req, (status, m) => new DxHttpError(status, '33', `Incorrect request (${m})`));
    if (path === '/login' && req.method === 'POST') {
      const { username, domain, password } = body;
      if (typeof username !== 'string' || typeof domain !== 'string' || typeof password !== 'string')
        return send(res, err(400, '33', 'Incorrect request (username, domain and password are required)'));
      const mine = accountsOf(`${username}@${domain}`);
      const f = broker.faults.take('auth', mine[0]?.id ?? '');
      if (f && f.kind !== 'delay' && shortCircuit(req, res, f, null)) return;
      if (mine.length === 0 || mine[0]!.meta.password !== password)
        return send(res, err(401, '3', 'Incorrect username or password'));
      const token = randomBytes(18).toString('base64url');
      sessions.set(token, { user: `${username}@${domain}`, lastUse: now() });
      return send(res, { status: 200, body: { sessionToken: token, timeout: timeoutMs } });
    }
    const s = session(req);
    if (!s) return send(res, err(401, '1', 'Not authorized'));
    if (path === '/ping' && req.method === 'POST') return send(res, { status: 200, body: {} });
    if (path === '/logout' && req.method === 'POST') {
      sessions.delete(s.token);
      return send(res, { status: 200, body: {} });
    }
    const mine = accountsOf(s.user);
    const user = /^\/users\/([^/]+)$/.exec(path);
    if (user && req.method === 'GET') {
      if (decodeURIComponent(user[1]!) !== s.user) return send(res, err(404, '2', 'Entity not found at server'));
      const [login, domain] = s.user.split('@');
      const accounts = mine.map((a) => ({
        owner: s.user,
        account: codeOf(a),
        version: 1,
        baseCurrency: a.currency,
        registrationTime: a.createdAt,
        isPositionBased: a.hedging,
      }));
      return send(res, { status: 200, body: { userDetails: [{ login, domain, accounts }] } });
    }
    if (path === '/instruments/query' && req.method === 'GET') return send(res, routes.instruments());
    const inst = /^\/instruments\/([^/]+)$/.exec(path);
    if (inst && req.method === 'GET') return send(res, routes.instruments(decodeURIComponent(inst[1]!)));

    const m = /^\/accounts\/([^/]+)(\/.*)$/.exec(path);
    if (!m) return send(res, err(404, '2', 'Entity not found at server'));
    const code = decodeURIComponent(m[1]!);
    const sim = mine.find((a) => codeOf(a) === code);
    // A foreign account is as unknown as a missing one (the spec: 404 for both).
    if (!sim) return send(res, err(404, '2', 'Entity not found at server'));
    const acct: DxAcct = { sim, code };
    const rest = m[2]!;
    const ifMatch = typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : null;
    const ctx: RouteCtx = { acct, params: [code], query: url.searchParams, body, ifMatch };
    const handler = pick(rest, req.method ?? 'GET', ctx);
    if (!handler) return send(res, err(404, '2', 'Entity not found at server'));

    const f = broker.faults.take(routes.opOf(req.method ?? 'GET', rest, body, acct), sim.id);
    if (f) {
      if (f.kind === 'timeout_after_apply' || f.kind === 'cancel_after_timeout') {
        if (f.kind === 'cancel_after_timeout') ctx.refuseAs = f.refuseAs ?? 'cancelled';
        try {
          handler();
        } catch {
          // The answer is lost either way; only the applied state matters.
        }
        held.hold(req, f);
        return;
      }
      if (f.kind === 'partial_fill') ctx.partialRatio = f.partialRatio ?? 0.5;
      else if (f.kind !== 'delay' && shortCircuit(req, res, f, s.token)) return;
    }
    let reply: Reply;
    try {
      reply = handler();
    } catch (e) {
      reply = replyForError(e);
    }
    if (f?.kind === 'delay') await sleep(f.delayMs ?? 0);
    send(res, reply);
  }

  function pick(rest: string, method: string, ctx: RouteCtx): (() => Reply) | null {
    if (method === 'GET' && rest === '/metrics') return () => routes.metrics(ctx);
    if (method === 'GET' && rest === '/positions') return () => routes.positions(ctx);
    if (method === 'GET' && rest === '/orders') return () => routes.working(ctx);
    if (method === 'GET' && rest === '/orders/history') return () => routes.history(ctx);
    if (method === 'POST' && rest === '/orders') return () => routes.place(ctx);
    if (method === 'PUT' && rest === '/orders') return () => routes.modify(ctx);
    const one = /^\/orders\/([^/]+)$/.exec(rest);
    if (method === 'DELETE' && one) {
      ctx.params.push(decodeURIComponent(one[1]!));
      return () => routes.cancel(ctx);
    }
    const inst = /^\/instruments\/([^/]+)$/.exec(rest);
    if (method === 'GET' && inst) {
      ctx.params.push(decodeURIComponent(inst[1]!));
      return () => routes.instrumentDetails(ctx);
    }
    return null;
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (!url.pathname.startsWith(`${PREFIX}/`)) return send(res, err(404, '2', 'Entity not found at server'));
    handle(url.pathname.slice(PREFIX.length), url, req, res).catch((e: unknown) => send(res, replyForError(e)));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    baseUrl: `http://${host}:${addr.port}${PREFIX}`,
    close: async () => {
      held.releaseAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
