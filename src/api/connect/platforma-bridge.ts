import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { brokerIdentity as brokerIdentityOf } from '../../domain/broker-identity.js';
import { AppError, invalid, notFound } from '../../domain/errors.js';
import { BRIDGE_WS_PATH } from '../bridge/endpoint.js';
import { BRIDGE_POLL_PATH } from '../bridge/poll.js';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { QUOTA_NOTE } from '../quotas.js';
import { AccountSchema, OPEN, stdErrors, toAccountJson } from '../schemas.js';
import { holderAfterProof, storeConnectedAccount } from './assign.js';
import { connectLimit } from './limit.js';
import { AssignFields } from './platformb.js';

const TokenOnce = Type.Object({
  tokenId: Type.String(),
  token: Type.String({ description: 'the bridge token, shown this once (only its hash is stored)' }),
  createdAt: Type.String(),
});
const Where = Type.Object({
  url: Type.String({ description: 'what the MT5 EA connects to (its BridgeUrl input): the WebSocket' }),
  pollUrl: Type.String({ description: 'what the MT4 EA polls (its BridgeUrl input): HTTPS long polling' }),
  allowList: Type.String({ description: "what to add to the terminal's list of allowed URLs" }),
});
const Status = Type.Object({
  connected: Type.Boolean(),
  helloAt: Type.Union([Type.String(), Type.Null()]),
  heartbeatAgeSec: Type.Union([Type.Number(), Type.Null()]),
  lastSeenAt: Type.Union([Type.String(), Type.Null()], {
    description: "when the EA's last heartbeat (or its hello, before any) arrived",
  }),
  silent: Type.Boolean({ description: 'no heartbeat for silentAfterSec: the account counts as disconnected' }),
  silentAfterSec: Type.Number(),
  balance: Type.Union([Type.String(), Type.Null()], { description: "the last heartbeat's, a decimal string" }),
  equity: Type.Union([Type.String(), Type.Null()], { description: "the last heartbeat's, a decimal string" }),
  tradeAllowed: Type.Union([Type.Boolean(), Type.Null()]),
  ea: Type.Union([Type.String(), Type.Null()]),
  terminalBuild: Type.Union([Type.Integer(), Type.Null()]),
  marginMode: Type.Union([Type.Literal('hedging'), Type.Literal('netting'), Type.Null()]),
});
const IdParam = Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) });

function where(req: FastifyRequest) {
  const https = req.protocol === 'https';
  const origin = `${https ? 'https' : 'http'}://${req.host}`;
  return {
    url: `${https ? 'wss' : 'ws'}://${req.host}${BRIDGE_WS_PATH}`,
    pollUrl: `${origin}${BRIDGE_POLL_PATH}`,
    allowList: origin,
  };
}

/**
 * Platform A, self-hosted ("MetaTrader, self-hosted" wizard): an account connected by an EA in the user's own
 * terminal instead of a cloud. Not one of the spec's flows (docs/open-points.md, "Terminal bridge"): create the
 * account and its token (shown once), show the URL to allow-list, poll the status until the EA says hello;
 * rotate and revoke tokens.
 */
export async function connectBridgeRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const bridge = deps.bridge;
  if (!bridge) return;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = requireAuth(deps.auth, 'access_token');
  const common = { tags: ['Connect accounts'], security: [{ accessToken: [] }], ...OPEN };
  const owned = async (req: FastifyRequest, id: string) => {
    const a = await deps.store.accounts.byId(id);
    // A foreign account, a removed one and one of another platform are the same 404 as an unknown id.
    if (!a || a.userId !== userOf(req) || a.removedAt || a.platform !== 'platforma') throw notFound('account');
    const link = bridge.hub.peek(a.id);
    if (!(await bridge.tokens.list(a.id)).length) throw notFound('account');
    return { account: a, link };
  };

  r.post(
    '/api/connect/platforma/bridge',
    {
      onRequest: [auth, connectLimit(deps)],
      schema: {
        ...common,
        operationId: 'connectPlatformABridge',
        description: QUOTA_NOTE('accounts', 'ACCOUNTS', 'a reconnect does not count'),
        summary:
          'Platform A, self-hosted: create an account connected through the terminal bridge, and its first token',
        body: Type.Object(
          {
            server: Type.String({ minLength: 1, maxLength: 100 }),
            login: Type.String({ minLength: 1, maxLength: 20, pattern: '^[0-9]+$' }),
            ...AssignFields,
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ account: AccountSchema, token: TokenOnce, bridge: Where }),
          ...stdErrors(409),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const userId = userOf(req);
      // Every connection joins its group once its connection test passed, and a bridge account's can run only after
      // its EA's hello: a group named now would be dropped without a word (seen: the account stayed unassigned).
      if (b.groupId)
        throw invalid(
          'groupId: a self-hosted account joins a copier group once its EA has connected (its connection test needs the EA); create it without a group, then put it in the group (the Copier groups page, or PUT /app/v1/accounts/{id}/assignment)',
          { field: 'groupId' },
        );
      const brokerIdentity = brokerIdentityOf({ platform: 'platforma', server: b.server, accountId: b.login });
      const holder = await holderAfterProof(deps, userId, brokerIdentity);
      if (holder && holder.userId !== userId)
        throw new AppError('account_already_connected', 'this login is connected by another user');
      const { account } = await storeConnectedAccount(deps, {
        userId,
        platform: 'platforma',
        role: b.role ?? 'slave',
        groupId: b.groupId ?? null,
        name: b.name ?? `MT5 ${b.login} @ ${b.server} (self-hosted)`,
        brokerAccountId: b.login,
        brokerAccountNumber: b.login,
        brokerName: b.server,
        environment: null,
        currency: null,
        brokerIdentity,
        credentials: { connection: 'bridge', login: b.login, server: b.server },
      });
      const issued = await bridge.tokens.create(account.id);
      reply.code(201);
      return {
        account: toAccountJson((await deps.store.accounts.byId(account.id))!),
        token: { tokenId: issued.id, token: issued.token, createdAt: issued.createdAt.toISOString() },
        bridge: where(req),
      };
    },
  );

  r.get(
    '/api/connect/platforma/bridge/:account_id',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'platformABridgeStatus',
        summary: "Platform A, self-hosted: whether the EA has said hello, and its heartbeat's age",
        params: IdParam,
        response: { 200: Type.Object({ status: Status, bridge: Where }), ...stdErrors() },
      },
    },
    async (req) => {
      const { link } = await owned(req, req.params.account_id);
      const hb = link?.heartbeat ?? null;
      const now = Date.now();
      const seen = Math.max(link?.helloAt ?? 0, hb?.receivedAt ?? 0);
      return {
        status: {
          connected: link?.connected ?? false,
          helloAt: link?.helloAt ? new Date(link.helloAt).toISOString() : null,
          heartbeatAgeSec: hb ? Math.max(0, (now - hb.receivedAt) / 1000) : null,
          lastSeenAt: seen ? new Date(seen).toISOString() : null,
          silent: link?.beat(now, bridge.hub.silentAfterMs) === 'silent',
          silentAfterSec: bridge.hub.silentAfterMs / 1000,
          balance: hb?.balance ?? null,
          equity: hb?.equity ?? null,
          tradeAllowed: hb?.tradeAllowed ?? link?.hello?.tradeAllowed ?? null,
          ea: link?.hello?.ea ?? null,
          terminalBuild: link?.hello?.build ?? null,
          marginMode: link?.hello?.marginMode ?? null,
        },
        bridge: where(req),
      };
    },
  );

  r.post(
    '/api/connect/platforma/bridge/:account_id/tokens',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'rotatePlatformABridgeToken',
        summary: 'Platform A, self-hosted: a new bridge token; the others keep working for overlapSec (default 24 h)',
        params: IdParam,
        body: Type.Optional(
          Type.Object(
            { overlapSec: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86_400 })) },
            { additionalProperties: false },
          ),
        ),
        response: { 201: TokenOnce, ...stdErrors() },
      },
    },
    async (req, reply) => {
      const { account } = await owned(req, req.params.account_id);
      const issued = await bridge.tokens.rotate(account.id, req.body?.overlapSec);
      reply.code(201);
      return { tokenId: issued.id, token: issued.token, createdAt: issued.createdAt.toISOString() };
    },
  );

  r.delete(
    '/api/connect/platforma/bridge/:account_id/tokens/:token_id',
    {
      onRequest: auth,
      schema: {
        ...common,
        operationId: 'revokePlatformABridgeToken',
        summary: 'Platform A, self-hosted: revoke a bridge token now (its EA connection is closed)',
        params: Type.Object({ account_id: Type.String({ maxLength: 64 }), token_id: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null(), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const { account } = await owned(req, req.params.account_id);
      if (!(await bridge.tokens.revoke(account.id, req.params.token_id))) throw notFound('bridge token');
      bridge.hub.revoke(req.params.token_id);
      reply.code(204);
      return null;
    },
  );
}
