import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimBrokerApi } from '../contract.js';
import type { Scope, SimTokenStore } from './tokens.js';

/**
 * The simulated cTrader ID on loopback HTTP: the consent page (real: id.ctrader.com/my/settings/openapi/
 * grantingaccess/ or openapi.ctrader.com/apps/auth) and the token endpoint (openapi.ctrader.com/apps/token),
 * with the fact sheet's parameter names (§3) and camelCase token JSON.
 */

export interface OAuthHttpOptions {
  host: string;
  port: number;
  clientId: string;
  clientSecret: string;
  broker: SimBrokerApi;
  tokens: SimTokenStore;
}

const AUTH_PATHS = new Set([
  '/apps/auth',
  '/my/settings/openapi/grantingaccess/',
  '/my/settings/openapi/grantingaccess',
]);

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startOAuthHttp(o: OAuthHttpOptions): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    handle(o, req, res).catch((err: unknown) =>
      json(res, 500, { errorCode: 'SERVER_ERROR', description: (err as Error).message }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://${o.host}:${port}` };
}

async function handle(o: OAuthHttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://loopback');
  if (AUTH_PATHS.has(url.pathname) && req.method === 'GET') return authorize(o, url, res);
  if (url.pathname === '/apps/token' && (req.method === 'GET' || req.method === 'POST')) {
    // OpenApiPy sends GET query parameters, other clients POST a form: accept both (fact sheet §9).
    const params = new URLSearchParams(url.search);
    if (req.method === 'POST') for (const [k, v] of new URLSearchParams(await readBody(req))) params.set(k, v);
    return token(o, params, res);
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
}

function authorize(o: OAuthHttpOptions, url: URL, res: ServerResponse): void {
  const q = url.searchParams;
  const clientId = q.get('client_id') ?? '';
  const redirectUri = q.get('redirect_uri') ?? '';
  const scope: Scope = q.get('scope') === 'accounts' ? 'accounts' : 'trading';
  const state = q.get('state');
  if (clientId !== o.clientId)
    return page(res, 400, 'Unknown application', '<p>client_id is not a registered application.</p>');
  let target: URL;
  try {
    target = new URL(redirectUri);
  } catch {
    return page(res, 400, 'Bad redirect', '<p>redirect_uri is missing or not an absolute URL.</p>');
  }
  const user = q.get('user');
  const deny = q.get('deny');
  if (deny !== null) {
    target.searchParams.set('error', 'access_denied');
    if (state !== null) target.searchParams.set('state', state);
    return void res.writeHead(302, { location: target.toString() }).end();
  }
  if (user) {
    // The simulator has no login: choosing a cTrader ID user on this page stands for signing in and consenting.
    target.searchParams.set('code', o.tokens.issueCode(user, clientId, redirectUri, scope));
    if (state !== null) target.searchParams.set('state', state);
    return void res.writeHead(302, { location: target.toString() }).end();
  }
  const users = [
    ...new Set(
      o.broker
        .accounts()
        .map((a) => a.meta['ctidUserId'])
        .filter((u): u is string => !!u),
    ),
  ].sort();
  const link = (extra: string) => `${url.pathname}?${q.toString()}&${extra}`;
  const items = users
    .map(
      (u) =>
        `<li><a href="${escapeHtml(link(`user=${encodeURIComponent(u)}`))}">Sign in as ${escapeHtml(u)} and allow</a></li>`,
    )
    .join('');
  page(
    res,
    200,
    'Allow access to your trading accounts',
    `<p>An application asks for <b>${escapeHtml(scope)}</b> access.</p><ul>${items || '<li>No simulated cTrader ID users yet.</li>'}</ul>` +
      `<p><a href="${escapeHtml(link('deny=1'))}">Deny</a></p>`,
  );
}

function token(o: OAuthHttpOptions, p: URLSearchParams, res: ServerResponse): void {
  if (p.get('client_id') !== o.clientId || p.get('client_secret') !== o.clientSecret) {
    return json(res, 400, { errorCode: 'ACCESS_DENIED', description: 'client_id or client_secret is wrong' });
  }
  const grant = p.get('grant_type');
  let out: ReturnType<SimTokenStore['exchangeCode']> | undefined;
  if (grant === 'authorization_code')
    out = o.tokens.exchangeCode(p.get('code') ?? '', p.get('client_id') ?? '', p.get('redirect_uri') ?? '');
  else if (grant === 'refresh_token') out = o.tokens.refreshPair(p.get('refresh_token') ?? '');
  else
    return json(res, 400, { errorCode: 'INVALID_REQUEST', description: `unsupported grant_type ${grant ?? '(none)'}` });
  if ('error' in out) return json(res, 400, { errorCode: 'ACCESS_DENIED', description: out.error });
  json(res, 200, {
    accessToken: out.accessToken,
    refreshToken: out.refreshToken,
    expiresIn: out.expiresIn,
    tokenType: out.tokenType,
    errorCode: null,
    description: null,
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

function page(res: ServerResponse, status: number, title: string, html: string): void {
  res
    .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
    .end(
      `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${html}</body></html>`,
    );
}

function readBody(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
