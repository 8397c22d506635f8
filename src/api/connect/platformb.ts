import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  discoverTradeLockerAccounts,
  verifyTradeLockerAccount,
  type TradeLockerAccountChoice,
} from '../../platforms/tradelocker/connect.js';
import type { ApiDeps } from '../deps.js';
import { QUOTA_NOTE } from '../quotas.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import { TestedAccountSchema, testAndPlace } from './connection-test.js';
import { ConnectionSessions } from './sessions.js';
import { connectLimit } from './limit.js';
import { storeConnectedAccount } from './assign.js';
import { brokerIdentity as brokerIdentityOf } from '../../domain/broker-identity.js';

interface BSession {
  userId: string;
  environment: 'demo' | 'live';
  server: string;
  email: string;
  password: string;
  accounts: TradeLockerAccountChoice[];
}

export const AssignFields = {
  groupId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  role: Type.Optional(Type.Union([Type.Literal('master'), Type.Literal('slave')])),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};

/**
 * Platform B connection flow (spec table): Demo or Live, broker server, email and password; when several
 * accounts come back the user picks one and verifies its account number. Two counted calls.
 */
export async function connectPlatformBRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const sessions = new ConnectionSessions<BSession>();
  const onRequest = [requireAuth(deps.auth, 'access_token'), connectLimit(deps)];
  const security = [{ accessToken: [] }];
  const tags = ['Connect accounts'];

  r.post(
    '/api/connect/platformb/discover',
    {
      onRequest,
      schema: {
        operationId: 'connectPlatformBDiscover',
        tags,
        security,
        ...OPEN,
        summary: 'Platform B step 1: sign in at the broker and list the accounts of that login',
        body: Type.Object(
          {
            environment: Type.Union([Type.Literal('demo'), Type.Literal('live')]),
            server: Type.String({ minLength: 1, maxLength: 100, description: 'the broker (server) name' }),
            email: Type.String({ minLength: 3, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: 256 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            connectionId: Type.String(),
            accounts: Type.Array(
              Type.Object({
                accountId: Type.String(),
                accNum: Type.Integer(),
                accountNumber: Type.String(),
                name: Type.String(),
                currency: Type.String(),
                balance: Type.Number(),
              }),
            ),
          }),
          ...stdErrors(422, 502, 503),
        },
      },
    },
    async (req) => {
      const b = req.body;
      const accounts = await discoverTradeLockerAccounts({
        baseUrl: deps.endpoints.platformb.baseUrl(b.environment),
        email: b.email,
        password: b.password,
        server: b.server,
      });
      const connectionId = sessions.put({
        userId: userOf(req),
        environment: b.environment,
        server: b.server,
        email: b.email,
        password: b.password,
        accounts,
      });
      return {
        connectionId,
        accounts: accounts.map((a) => ({
          accountId: a.id,
          accNum: a.accNum,
          accountNumber: a.accountNumber,
          name: a.name,
          currency: a.currency,
          balance: a.balance.toNumber(),
        })),
      };
    },
  );

  r.post(
    '/api/connect/platformb/confirm',
    {
      onRequest,
      schema: {
        operationId: 'connectPlatformB',
        tags,
        security,
        ...OPEN,
        description: QUOTA_NOTE('accounts', 'ACCOUNTS', 'a reconnect does not count'),
        summary:
          "Platform B step 2: pick the account, verify its account number, connect it to a group (200: a reconnect of the caller's connection; 409 account_already_connected: connected by another user)",
        body: Type.Object(
          {
            connectionId: Type.String({ minLength: 1, maxLength: 64 }),
            accountId: Type.String({ maxLength: 32 }),
            accountNumber: Type.String({ maxLength: 32 }),
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
      const picked = verifyTradeLockerAccount(s.accounts, {
        accountId: req.body.accountId,
        accountNumber: req.body.accountNumber,
      });
      const brokerIdentity = brokerIdentityOf({
        platform: 'platformb',
        environment: s.environment,
        server: s.server,
        accountId: picked.id,
      });
      const { account, reconnected, place } = await storeConnectedAccount(deps, {
        brokerIdentity,
        userId,
        platform: 'platformb',
        role: req.body.role ?? 'slave',
        groupId: req.body.groupId ?? null,
        name: req.body.name ?? `${s.server} #${picked.accountNumber}`,
        brokerAccountId: picked.id,
        brokerAccountNumber: picked.accountNumber,
        brokerName: s.server,
        environment: s.environment,
        currency: picked.currency,
        balance: picked.balance,
        equity: picked.balance,
        credentials: {
          email: s.email,
          password: s.password,
          server: s.server,
          accNum: picked.accNum,
          accountId: picked.id,
        },
      });
      sessions.delete(req.body.connectionId);
      const tested = await testAndPlace(deps, account, place);
      reply.code(reconnected ? 200 : 201);
      return tested;
    },
  );
}
