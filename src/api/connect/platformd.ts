import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { brokerIdentity as brokerIdentityOf } from '../../domain/broker-identity.js';
import { AppError } from '../../domain/errors.js';
import { type DxAccountChoice, discoverDxAccounts, pickDxAccount } from '../../platforms/dxtrade/connect.js';
import type { ApiDeps } from '../deps.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { QUOTA_NOTE } from '../quotas.js';
import { OPEN, stdErrors } from '../schemas.js';
import { storeConnectedAccount } from './assign.js';
import { TestedAccountSchema, testAndPlace } from './connection-test.js';
import { connectLimit } from './limit.js';
import { AssignFields } from './platformb.js';
import { ConnectionSessions } from './sessions.js';

interface DSession {
  userId: string;
  environment: 'demo' | 'live';
  server: string;
  username: string;
  domain: string;
  password: string;
  accounts: DxAccountChoice[];
}

/**
 * Platform D (DXtrade) connection flow: Demo or Live, the broker's DXtrade server, username, domain and password;
 * the user picks one of the accounts the server lists. Two counted calls, as for platform B. The paths are ours
 * (the spec fixes no platform D routes): see docs/open-points.md.
 */
export async function connectPlatformDRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const sessions = new ConnectionSessions<DSession>();
  const onRequest = [requireAuth(deps.auth, 'access_token'), connectLimit(deps)];
  const security = [{ accessToken: [] }];
  const tags = ['Connect accounts'];

  r.post(
    '/api/connect/platformd/discover',
    {
      onRequest,
      schema: {
        operationId: 'connectPlatformDDiscover',
        tags,
        security,
        ...OPEN,
        summary: 'Platform D step 1: log in at the DXtrade server and list the accounts of that user',
        body: Type.Object(
          {
            environment: Type.Union([Type.Literal('demo'), Type.Literal('live')]),
            server: Type.String({ minLength: 1, maxLength: 200, description: "the broker's DXtrade address (https)" }),
            username: Type.String({ minLength: 1, maxLength: 254 }),
            domain: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 100,
                description: "the user's DXtrade domain; default 'default'",
              }),
            ),
            password: Type.String({ minLength: 1, maxLength: 256 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            connectionId: Type.String(),
            accounts: Type.Array(
              Type.Object({
                account: Type.String(),
                currency: Type.String(),
                balance: Type.Number(),
                hedging: Type.Boolean(),
              }),
            ),
          }),
          ...stdErrors(422, 502, 503),
        },
      },
    },
    async (req) => {
      const b = req.body;
      let baseUrl: string;
      try {
        baseUrl = deps.endpoints.platformd.baseUrl(b.server, b.environment);
      } catch (err) {
        throw new AppError('invalid_request', `server: ${(err as Error).message}`, { details: { field: 'server' } });
      }
      const domain = b.domain ?? 'default';
      const accounts = await discoverDxAccounts({ baseUrl, username: b.username, domain, password: b.password });
      const connectionId = sessions.put({
        userId: userOf(req),
        environment: b.environment,
        server: b.server.trim(),
        username: b.username.trim(),
        domain,
        password: b.password,
        accounts,
      });
      return {
        connectionId,
        accounts: accounts.map((a) => ({
          account: a.account,
          currency: a.currency,
          balance: a.balance.toNumber(),
          hedging: a.hedging,
        })),
      };
    },
  );

  r.post(
    '/api/connect/platformd/confirm',
    {
      onRequest,
      schema: {
        operationId: 'connectPlatformD',
        tags,
        security,
        ...OPEN,
        description: QUOTA_NOTE('accounts', 'ACCOUNTS', 'a reconnect does not count'),
        summary:
          "Platform D step 2: pick the account and connect it to a group (200: a reconnect of the caller's connection; 409 account_already_connected: connected by another user)",
        body: Type.Object(
          {
            connectionId: Type.String({ minLength: 1, maxLength: 64 }),
            account: Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'the account code, as discover listed it',
            }),
            ...AssignFields,
          },
          { additionalProperties: false },
        ),
        response: { 200: TestedAccountSchema, 201: TestedAccountSchema, ...stdErrors(409) },
      },
    },
    async (req, reply) => {
      const userId = userOf(req);
      const s = sessions.get(userId, req.body.connectionId);
      const picked = pickDxAccount(s.accounts, req.body.account);
      const brokerIdentity = brokerIdentityOf({
        platform: 'platformd',
        environment: s.environment,
        server: s.server,
        accountId: picked.account,
      });
      const { account, reconnected, place } = await storeConnectedAccount(deps, {
        brokerIdentity,
        userId,
        platform: 'platformd',
        role: req.body.role ?? 'slave',
        groupId: req.body.groupId ?? null,
        name: req.body.name ?? `${s.server} ${picked.account}`,
        brokerAccountId: picked.account,
        brokerAccountNumber: picked.account,
        brokerName: s.server,
        environment: s.environment,
        currency: picked.currency,
        balance: picked.balance,
        equity: picked.balance,
        credentials: {
          username: s.username,
          domain: s.domain,
          password: s.password,
          server: s.server,
          account: picked.account,
          hedging: picked.hedging,
        },
      });
      sessions.delete(req.body.connectionId);
      const tested = await testAndPlace(deps, account, place);
      reply.code(reconnected ? 200 : 201);
      return tested;
    },
  );
}
