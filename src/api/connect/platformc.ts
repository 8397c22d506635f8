import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  buildAuthorizationUrl,
  exchangeCode,
  listAccountsForToken,
  verifyCTraderAccount,
  type CTraderAccountListing,
} from '../../platforms/ctrader/oauth.js';
import { AppError, type ErrorCode } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import { QUOTA_NOTE } from '../quotas.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { ErrorBody, OPEN, stdErrors } from '../schemas.js';
import { TestedAccountSchema, testAndPlace } from './connection-test.js';
import { ConnectionSessions } from './sessions.js';
import { connectLimit } from './limit.js';
import { requireAppCredentials } from './app-credentials.js';
import { storeConnectedAccount } from './assign.js';
import { brokerIdentity as brokerIdentityOf } from '../../domain/broker-identity.js';
import { AssignFields } from './platformb.js';

interface CSession {
  userId: string;
  nonce: string;
  /** Also set as a cookie in the browser that started the flow: the callback must come from that browser. */
  browserNonce: string;
  redirectUri: string;
  status: 'pending' | 'authorized' | 'failed';
  error: string | null;
  /** Why a failed connection failed: the broker's refusal, or the broker not answering. */
  failure?: ErrorCode;
  tokens: { accessToken: string; refreshToken: string } | null;
  accounts: CTraderAccountListing[];
}

const CALLBACK = '/api/connect/platformc/callback';
const COOKIE = 'ct_oauth_c';

/** The page the OAuth popup ends on: it tells the app's window and closes. No token or secret is in it. */
function popupPage(msg: { connectionId: string | null; ok: boolean; error?: string }, nonce: string): string {
  const data = JSON.stringify({ type: 'copytrade:platformc', ...msg }).replace(/</g, '\\u003c');
  return `<!doctype html><meta charset="utf-8"><title>copytrade</title><p>${msg.ok ? 'Account access approved. You can close this window.' : 'Authorization failed. You can close this window.'}</p>
<script nonce="${nonce}">try{window.opener&&window.opener.postMessage(${data},window.location.origin)}catch(e){}setTimeout(function(){window.close()},300)</script>`;
}

/**
 * The callback's answers: HTML for the popup (the document's only text/html operation; issue 46, finding 8). A new
 * object per server: Fastify rewrites a response schema it is given in place, and a second server built in the
 * same process (test files share one on Node 20) served a document without the 400.
 */
const callbackAnswers = () =>
  ({
    200: {
      description:
        'an HTML page that posts {type: "copytrade:platformc", connectionId, ok, error?} to the window that opened it, then closes; ok false when the broker refused or the approval failed (the connection then reads failed)',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    400: {
      description:
        'the same page with ok false and connectionId null: an unknown, expired or already used connection, or a callback from another browser. A query value over its maximum length is a JSON error instead',
      content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ErrorBody } },
    },
  }) as Record<number, unknown>;

const origin = (req: FastifyRequest) =>
  process.env.COPYTRADE_PUBLIC_URL?.replace(/\/$/, '') ?? `${req.protocol}://${req.headers.host}`;

/**
 * Platform C connection flow (spec table): start -> authorization popup -> callback with the code -> account
 * list -> pick -> verify account and environment -> connect to a group. Counted calls: start and confirm.
 */
export async function connectPlatformCRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const sessions = new ConnectionSessions<CSession>();
  const auth = requireAuth(deps.auth, 'access_token');
  const security = [{ accessToken: [] }];
  const tags = ['Connect accounts'];
  const c = () => deps.endpoints.platformc;
  const configured = requireAppCredentials(c);

  r.post(
    '/api/connect/platformc/start',
    {
      onRequest: [auth, configured, connectLimit(deps)],
      schema: {
        operationId: 'connectPlatformCStart',
        tags,
        security,
        ...OPEN,
        summary:
          'Platform C step 1: an authorization URL to open in a popup (409 platform_not_configured, not counted toward the connection limit: the server has no Open API application credentials)',
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: {
          200: Type.Object({ connectionId: Type.String(), authorizationUrl: Type.String() }),
          ...stdErrors(409),
        },
      },
    },
    async (req, reply) => {
      const nonce = randomBytes(16).toString('base64url');
      const browserNonce = randomBytes(16).toString('base64url');
      const redirectUri = `${origin(req)}${CALLBACK}`;
      const connectionId = sessions.put({
        userId: userOf(req),
        nonce,
        browserNonce,
        redirectUri,
        status: 'pending',
        error: null,
        tokens: null,
        accounts: [],
      });
      // Binds the approval to this browser: a link to someone else's authorization URL cannot attach their
      // broker account to an attacker's session (SameSite=Lax still rides the provider's redirect back).
      // Secure when the browser came over https: TLS here, or a trusted proxy's X-Forwarded-Proto
      // (COPYTRADE_TRUST_PROXY; req.protocol reads that header only from a trusted peer). Not over plain http,
      // where a browser would drop a Secure cookie and the callback could never match.
      const secure = req.protocol === 'https' ? '; Secure' : '';
      reply.header(
        'set-cookie',
        `${COOKIE}=${browserNonce}; Path=${CALLBACK}; HttpOnly; SameSite=Lax; Max-Age=600${secure}`,
      );
      return {
        connectionId,
        authorizationUrl: buildAuthorizationUrl({
          oauthBaseUrl: c().oauthBaseUrl,
          clientId: c().clientId,
          redirectUri,
          state: `${connectionId}.${nonce}`,
        }),
      };
    },
  );

  r.get(
    CALLBACK,
    {
      schema: {
        operationId: 'oauthCallbackPlatformC',
        tags,
        security: [],
        ...OPEN,
        summary: 'Where the authorization popup returns (HTML that notifies the app and closes)',
        querystring: Type.Object({
          code: Type.Optional(Type.String({ maxLength: 2048 })),
          state: Type.Optional(Type.String({ maxLength: 200 })),
          error: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: callbackAnswers(),
      },
    },
    async (req, reply) => {
      // Its one inline script runs by nonce; nothing else loads, and no other site may frame it (issue 46).
      const cspNonce = randomBytes(16).toString('base64');
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header(
          'content-security-policy',
          `default-src 'none'; script-src 'nonce-${cspNonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        );
      const [connectionId, nonce] = (req.query.state ?? '').split('.');
      const s = connectionId ? sessions.peek(connectionId) : null;
      const same = (a: string | undefined, b: string) =>
        !!a && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
      const cookie = /(?:^|;\s*)ct_oauth_c=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      // Only a pending connection takes a callback, and only from the browser that started it.
      const nonceOk = !!s && s.status === 'pending' && same(nonce, s.nonce) && same(cookie, s.browserNonce);
      if (!s || !nonceOk)
        return reply
          .code(400)
          .send(
            popupPage({ connectionId: null, ok: false, error: 'unknown or expired connection; start again' }, cspNonce),
          );
      const fail = (error: string, failure: ErrorCode = 'broker_auth_failed') => {
        sessions.update(connectionId!, { ...s, status: 'failed', error, failure });
        return reply.send(popupPage({ connectionId: connectionId!, ok: false, error }, cspNonce));
      };
      if (req.query.error || !req.query.code)
        return fail(
          req.query.error === 'access_denied'
            ? 'access was not approved'
            : `authorization failed: ${req.query.error ?? 'no code'}`,
        );
      try {
        const tokens = await exchangeCode({
          oauthBaseUrl: c().oauthBaseUrl,
          clientId: c().clientId,
          clientSecret: c().clientSecret,
          code: req.query.code,
          redirectUri: s.redirectUri,
        });
        const listed = await listAccountsForToken({
          endpoint: c().endpoint('demo'),
          clientId: c().clientId,
          clientSecret: c().clientSecret,
          accessToken: tokens.accessToken,
        });
        if (!listed.canTrade) return fail('the approval only allows viewing; approve trading access to copy trades');
        sessions.update(connectionId!, {
          ...s,
          status: 'authorized',
          tokens: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
          accounts: listed.accounts,
        });
        return reply.send(popupPage({ connectionId: connectionId!, ok: true }, cspNonce));
      } catch (err) {
        const unreachable =
          !(err instanceof AppError) || err.code === 'upstream_error' || err.code === 'upstream_unavailable';
        return fail(
          err instanceof AppError ? err.message : 'the broker did not answer; try again',
          unreachable ? 'upstream_unavailable' : 'broker_auth_failed',
        );
      }
    },
  );

  r.get(
    '/api/connect/platformc/connections/:connection_id',
    {
      onRequest: auth,
      schema: {
        operationId: 'getPlatformCConnection',
        tags,
        security,
        ...OPEN,
        summary: 'State of a platform C connection and the accounts the approval granted',
        params: Type.Object({ connection_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: {
          200: Type.Object({
            status: Type.String({ description: 'pending, authorized or failed' }),
            error: Type.Union([Type.String(), Type.Null()]),
            accounts: Type.Array(
              Type.Object({
                ctidTraderAccountId: Type.String(),
                accountNumber: Type.Union([Type.String(), Type.Null()]),
                environment: Type.String(),
                brokerName: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
          ...stdErrors(),
        },
      },
    },
    async (req) => {
      const s = sessions.get(userOf(req), req.params.connection_id);
      return {
        status: s.status,
        error: s.error,
        accounts: s.accounts.map((a) => ({
          ctidTraderAccountId: a.ctidTraderAccountId,
          accountNumber: a.traderLogin,
          environment: a.environment,
          brokerName: a.brokerName,
        })),
      };
    },
  );

  r.post(
    '/api/connect/platformc/confirm',
    {
      onRequest: [auth, configured, connectLimit(deps)],
      schema: {
        operationId: 'connectPlatformC',
        tags,
        security,
        ...OPEN,
        description: QUOTA_NOTE('accounts', 'ACCOUNTS', 'a reconnect does not count'),
        summary:
          "Platform C last step: pick the account, verify account and environment, connect it to a group (200: a reconnect of the caller's connection; 409 account_already_connected: connected by another user)",
        body: Type.Object(
          {
            connectionId: Type.String({ minLength: 1, maxLength: 64 }),
            ctidTraderAccountId: Type.String({ maxLength: 32 }),
            accountNumber: Type.String({ maxLength: 32 }),
            environment: Type.Union([Type.Literal('demo'), Type.Literal('live')]),
            ...AssignFields,
          },
          { additionalProperties: false },
        ),
        response: { 200: TestedAccountSchema, 201: TestedAccountSchema, ...stdErrors(409, 422) },
      },
    },
    async (req, reply) => {
      const userId = userOf(req);
      const s = sessions.get(userId, req.body.connectionId);
      if (s.status === 'failed')
        throw new AppError(
          s.failure ?? 'broker_auth_failed',
          `the broker did not authorize the connection: ${s.error}; start again`,
        );
      if (s.status !== 'authorized' || !s.tokens)
        throw new AppError('conflict', 'the authorization window has not been approved yet');
      const picked = verifyCTraderAccount(s.accounts, {
        ctidTraderAccountId: req.body.ctidTraderAccountId,
        accountNumber: req.body.accountNumber,
        environment: req.body.environment,
      });
      const brokerIdentity = brokerIdentityOf({
        platform: 'platformc',
        environment: picked.environment,
        accountId: picked.ctidTraderAccountId,
      });
      const { account, reconnected, place } = await storeConnectedAccount(deps, {
        brokerIdentity,
        userId,
        platform: 'platformc',
        role: req.body.role ?? 'slave',
        groupId: req.body.groupId ?? null,
        name: req.body.name ?? `${picked.brokerName ?? 'cTrader'} #${picked.traderLogin ?? picked.ctidTraderAccountId}`,
        brokerAccountId: picked.ctidTraderAccountId,
        brokerAccountNumber: picked.traderLogin ?? picked.ctidTraderAccountId,
        brokerName: picked.brokerName,
        environment: picked.environment,
        credentials: {
          ...s.tokens,
          ctidTraderAccountId: picked.ctidTraderAccountId,
          isLive: picked.isLive,
          ...(picked.traderLogin ? { traderLogin: picked.traderLogin } : {}),
        },
      });
      sessions.delete(req.body.connectionId);
      const tested = await testAndPlace(deps, account, place);
      reply.code(reconnected ? 200 : 201);
      return tested;
    },
  );
}
