import { HeldSockets, readJsonObject } from '../http-common.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ActiveFault, FaultOp, SimBrokerApi, SimErrorCode } from '../contract.js';
import { columnSet } from './columns.js';
import { TlDirectory, userKeyOf } from './directory.js';
import { TokenIssuer, type TokenClaims } from './jwt.js';
import { PriceHistory } from './price-history.js';
import { mergeRateLimits, type RateLimitEntry, SlidingWindowLimiter } from './rate-limits.js';
import { buildRoutes, HttpError, type Reply, type Route } from './routes.js';

export interface TradeLockerSimOptions {
  host?: string;
  port?: number;
  accessTokenTtlSec?: number;
  refreshTokenTtlSec?: number;
  /** Entries replace the default for their rateLimitType; served in /trade/config and enforced. */
  rateLimits?: RateLimitEntry[];
  enforceRateLimits?: boolean;
  /** Serve only users whose account meta.environment matches (one server per environment, like demo/live). */
  environment?: 'demo' | 'live';
  /** Serve row columns in a seeded random order, to prove clients resolve columns by id. */
  shuffleColumnsSeed?: number;
  historyPageSize?: number;
  /** How long a "never answered" request is held before its socket is destroyed (fault delayMs wins). */
  holdMs?: number;
  /** How often every instrument's quote is recorded for /trade/history and /trade/dailyBar; 0 = only on requests. */
  priceSampleMs?: number;
  /** Clock in ms for token lifetimes and rate-limit windows; Date.now when omitted. */
  now?: () => number;
}

export interface TradeLockerSimServer {
  baseUrl: string;
  close(): Promise<void>;
}

const PREFIX = '/backend-api';
const SIM_NOT_FOUND: SimErrorCode[] = ['POSITION_NOT_FOUND', 'ORDER_NOT_FOUND', 'UNKNOWN_ACCOUNT'];
const SIM_CODES = new Set<string>([
  'UNKNOWN_ACCOUNT',
  'UNKNOWN_SYMBOL',
  'INVALID_VOLUME',
  'INVALID_PRICE',
  'INVALID_STOPS',
  'NOT_ENOUGH_MONEY',
  'POSITION_NOT_FOUND',
  'ORDER_NOT_FOUND',
  'MARKET_CLOSED',
  'REJECTED',
]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function send(res: ServerResponse, reply: Reply, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  if (reply.status === 204 || reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(reply.body));
}

const fail = (status: number, errmsg: string): Reply => ({ status, body: { s: 'error', errmsg } });

/** A simulator business rejection becomes what TradeLocker shows: HTTP 200 with s:"error", or 404 for unknown ids. */
function replyForError(err: unknown): Reply {
  if (err instanceof HttpError) return fail(err.status, err.message);
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && SIM_CODES.has(code)) {
    const msg = `${code}: ${(err as Error).message}`;
    if ((SIM_NOT_FOUND as string[]).includes(code)) return fail(404, msg);
    if (code === 'UNKNOWN_SYMBOL') return fail(400, msg);
    return fail(200, msg);
  }
  return fail(500, 'internal error');
}

const readJson = (req: IncomingMessage) => readJsonObject(req, (status, message) => new HttpError(status, message));

/**
 * TradeLocker public REST API served over a simulated broker on loopback. It follows the fact sheet
 * (docs/platforms/platform-b-tradelocker-protocol.md): JWT auth with 201, accNum header, column maps in
 * /trade/config, `{s,d,errmsg}` envelopes, rejections as HTTP 200, 64-bit ids as strings, served rate limits.
 * Faults come from `broker.faults` so a test scripts them the same way for every protocol.
 */
export async function startTradeLockerSimServer(
  broker: SimBrokerApi,
  opts: TradeLockerSimOptions = {},
): Promise<TradeLockerSimServer> {
  const directory = new TlDirectory(broker, opts.environment);
  const now = opts.now ?? Date.now;
  const tokens = new TokenIssuer(opts.accessTokenTtlSec ?? 3600, opts.refreshTokenTtlSec ?? 7 * 24 * 3600, now);
  const rateLimits = mergeRateLimits(opts.rateLimits);
  const limiter = new SlidingWindowLimiter(rateLimits);
  const enforce = opts.enforceRateLimits ?? true;
  const holdMs = opts.holdMs ?? 30_000;
  const prices = new PriceHistory();
  const sampleAll = () => {
    for (const inst of broker.instruments()) prices.record(broker.quote(inst.symbol));
  };
  sampleAll();
  const routes = buildRoutes({
    broker,
    directory,
    columns: columnSet(opts.shuffleColumnsSeed),
    rateLimits,
    historyPageSize: opts.historyPageSize ?? 500,
    prices,
    historyBarsLimit: 5000,
  });
  const sampleMs = opts.priceSampleMs ?? 1000;
  const sampler = sampleMs > 0 ? setInterval(() => sampleAll(), sampleMs) : null;
  // The sampler must never keep a process (or a test run) alive on its own.
  sampler?.unref();
  const held = new HeldSockets(holdMs);
  const hold = (req: IncomingMessage, fault: ActiveFault) => held.hold(req, fault);

  const firstAccountOf = (userKey: string) => directory.accountsOf(userKey)[0]?.sim.id ?? '';

  /**
   * Applies a fault that short-circuits the request. Returns true when the request is finished (or abandoned).
   * Faults that change how the write runs (delay, partial fill, timeout after apply) are handled by the caller.
   */
  const shortCircuit = (
    req: IncomingMessage,
    res: ServerResponse,
    fault: ActiveFault,
    claims: TokenClaims | null,
  ): boolean => {
    switch (fault.kind) {
      case 'reset':
      case 'disconnect':
        req.socket.destroy();
        return true;
      case 'timeout_before_apply':
        hold(req, fault);
        return true;
      case 'rate_limit': {
        const after = fault.retryAfterSec ?? 1;
        send(res, fail(429, fault.message ?? 'Too many requests'), { 'retry-after': String(after) });
        return true;
      }
      case 'token_expired':
      case 'token_invalidated':
        if (claims) {
          // Expired: this access token stays dead, so the client must refresh. Invalidated: the whole session.
          if (fault.kind === 'token_invalidated') tokens.revokeSubject(claims.sub);
          else tokens.revoke(claims.jti);
        }
        send(res, fail(401, fault.message ?? (fault.kind === 'token_expired' ? 'Token expired' : 'Token invalidated')));
        return true;
      case 'reject':
        send(res, fail(200, fault.message ?? 'Order rejected by broker'));
        return true;
      default:
        return false;
    }
  };

  const takeFault = (op: Exclude<FaultOp, '*'>, simId: string) => broker.faults.take(op, simId);

  async function handleAuth(path: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (path === '/auth/jwt/token' && req.method === 'POST') {
      const body = await readJson(req);
      const { email, password, server } = body;
      if (
        typeof email !== 'string' ||
        typeof password !== 'string' ||
        typeof server !== 'string' ||
        !email ||
        !server
      ) {
        send(res, fail(400, 'email, password and server are required'));
        return true;
      }
      const key = userKeyOf(email, server);
      const fault = takeFault('auth', firstAccountOf(key));
      if (fault && (await runFaultPrelude(req, res, fault, null))) return true;
      if (!directory.checkPassword(key, password)) send(res, fail(401, 'Invalid credentials'));
      else send(res, { status: 201, body: tokens.issuePair(key) });
      return true;
    }
    if (path === '/auth/jwt/refresh' && req.method === 'POST') {
      const body = await readJson(req);
      const claims = typeof body.refreshToken === 'string' ? tokens.verify(body.refreshToken, 'refresh') : null;
      const fault = takeFault('auth', claims ? firstAccountOf(claims.sub) : '');
      if (fault && (await runFaultPrelude(req, res, fault, null))) return true;
      if (!claims) send(res, fail(401, 'Invalid refresh token'));
      else send(res, { status: 201, body: tokens.issuePair(claims.sub) });
      return true;
    }
    if (path === '/auth/jwt/all-accounts' && req.method === 'GET') {
      const claims = bearer(req);
      if (!claims) {
        send(res, fail(401, 'Unauthorized'));
        return true;
      }
      const fault = takeFault('read', firstAccountOf(claims.sub));
      if (fault && (await runFaultPrelude(req, res, fault, claims))) return true;
      const accounts = directory.accountsOf(claims.sub).map((a) => ({
        id: String(a.accountId),
        name: a.sim.meta.name ?? a.sim.login,
        currency: a.sim.currency,
        accNum: String(a.accNum),
        accountBalance: broker.state(a.sim.id).balance.toFixed(2),
        status: 'ACTIVE',
      }));
      send(res, { status: 200, body: { accounts } });
      return true;
    }
    return false;
  }

  /** Faults on calls that write nothing: those that would apply something just behave like their read form. */
  async function runFaultPrelude(
    req: IncomingMessage,
    res: ServerResponse,
    fault: ActiveFault,
    claims: TokenClaims | null,
  ): Promise<boolean> {
    if (fault.kind === 'timeout_after_apply') {
      hold(req, fault);
      return true;
    }
    if (fault.kind === 'delay') await sleep(fault.delayMs ?? 0);
    return shortCircuit(req, res, fault, claims);
  }

  function bearer(req: IncomingMessage): TokenClaims | null {
    const h = req.headers.authorization;
    if (!h || !h.startsWith('Bearer ')) return null;
    return tokens.verify(h.slice(7).trim(), 'access');
  }

  async function handleTrade(path: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let route: Route | undefined;
    let params: string[] = [];
    for (const r of routes) {
      const m = r.pattern.exec(path);
      if (m && r.method === req.method) {
        route = r;
        params = m.slice(1).map(decodeURIComponent);
        break;
      }
    }
    if (!route) {
      send(res, fail(404, 'Not found'));
      return;
    }
    const body = await readJson(req);
    const claims = bearer(req);
    if (!claims) {
      send(res, fail(401, 'Unauthorized'));
      return;
    }
    const accNumRaw = req.headers.accnum;
    const accNum = typeof accNumRaw === 'string' && /^\d+$/.test(accNumRaw) ? Number(accNumRaw) : null;
    if (accNum === null) {
      send(res, fail(400, 'accNum header is required'));
      return;
    }
    const acct = directory.byAccNum(claims.sub, accNum);
    if (!acct) {
      send(res, fail(403, 'accNum does not belong to this user'));
      return;
    }
    if (route.accountParam !== undefined && params[route.accountParam] !== String(acct.accountId)) {
      send(res, fail(403, 'accountId does not match accNum'));
      return;
    }
    if (enforce && route.rateType) {
      const wait = limiter.hit(`${claims.sub}|${accNum}`, route.rateType, now());
      if (wait !== null) {
        send(res, fail(429, 'Rate limit exceeded'), { 'retry-after': String(wait) });
        return;
      }
    }

    const fault = takeFault(route.op, acct.sim.id);
    const ctx = { params, query: url.searchParams, body, acct } as Parameters<Route['handler']>[0];
    if (fault) {
      if (fault.kind === 'timeout_after_apply' || fault.kind === 'cancel_after_timeout') {
        // cancel_after_timeout: taken, then refused by the broker; either way the answer never arrives.
        if (fault.kind === 'cancel_after_timeout') ctx.refuseAs = fault.refuseAs ?? 'cancelled';
        try {
          route.handler(ctx);
        } catch {
          // The answer is lost either way; only the applied state matters here.
        }
        hold(req, fault);
        return;
      }
      if (fault.kind === 'partial_fill') ctx.partialRatio = fault.partialRatio ?? 0.5;
      else if (fault.kind !== 'delay' && shortCircuit(req, res, fault, claims)) return;
    }
    let reply: Reply;
    try {
      reply = route.handler(ctx);
    } catch (err) {
      reply = replyForError(err);
    }
    if (fault?.kind === 'delay') await sleep(fault.delayMs ?? 0);
    send(res, reply);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (!url.pathname.startsWith(`${PREFIX}/`)) {
      send(res, fail(404, 'Not found'));
      return;
    }
    const path = url.pathname.slice(PREFIX.length);
    (async () => {
      if (path.startsWith('/auth/')) {
        if (!(await handleAuth(path, req, res))) send(res, fail(404, 'Not found'));
        return;
      }
      if (path.startsWith('/trade/')) {
        await handleTrade(path, url, req, res);
        return;
      }
      send(res, fail(404, 'Not found'));
    })().catch((err: unknown) => send(res, replyForError(err)));
  });
  // Clients time out and come back; an idle keep-alive socket must not keep close() waiting.
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
      if (sampler) clearInterval(sampler);
      held.releaseAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
