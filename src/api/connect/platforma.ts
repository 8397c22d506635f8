import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  FailedCredentialMemo,
  provisionMtAccount,
  removeMtAccount,
  searchMtServers,
} from '../../platforms/metatrader/connect.js';
import { brokerIdentity as brokerIdentityOf } from '../../domain/broker-identity.js';
import type { ApiDeps } from '../deps.js';
import { QUOTA_NOTE } from '../quotas.js';
import { requireAuth, userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import { connectLimit } from './limit.js';
import { holderAfterProof, storeConnectedAccount } from './assign.js';
import { alreadyConnected } from '../../store/repos/accounts.js';
import { AssignFields } from './platformb.js';
import { TestedAccountSchema, testAndPlace } from './connection-test.js';

const Platform = Type.Union([Type.Literal('mt4'), Type.Literal('mt5')]);

/**
 * Platform A connection flow (spec table): choose the platform, search the broker server, enter login and
 * trading password, confirm server and connection (we wait for the upstream's connected state), assign to a
 * group. One counted call; the server search is a lookup, not a connection request.
 */
export async function connectPlatformARoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const auth = requireAuth(deps.auth, 'access_token');
  const security = [{ accessToken: [] }];
  const tags = ['Connect accounts'];
  // Credentials the upstream refused are not sent again (each failed attempt may be billed upstream).
  const failed = new FailedCredentialMemo();
  const a = () => deps.endpoints.platforma;

  r.get(
    '/api/connect/platforma/servers',
    {
      onRequest: auth,
      schema: {
        operationId: 'searchPlatformAServers',
        tags,
        security,
        ...OPEN,
        summary: 'Platform A: search broker servers by name',
        querystring: Type.Object(
          { query: Type.String({ minLength: 1, maxLength: 100 }), platform: Type.Optional(Platform) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            servers: Type.Array(Type.Object({ broker: Type.String(), servers: Type.Array(Type.String()) })),
          }),
          ...stdErrors(502, 503),
        },
      },
    },
    async (req) => ({
      servers: await searchMtServers({
        baseUrl: a().baseUrl,
        token: a().token,
        platform: req.query.platform ?? 'mt5',
        query: req.query.query,
      }),
    }),
  );

  r.post(
    '/api/connect/platforma',
    {
      onRequest: [auth, connectLimit(deps)],
      schema: {
        operationId: 'connectPlatformA',
        tags,
        security,
        ...OPEN,
        description: QUOTA_NOTE('accounts', 'ACCOUNTS', 'a reconnect does not count'),
        summary:
          'Platform A: connect an MT4/MT5 login (waits until the upstream is connected to the broker); 200 when it reconnects a login the caller had connected, 409 account_already_connected when another user has (checked after the credentials: a wrong password is 422 either way)',
        body: Type.Object(
          {
            platform: Platform,
            server: Type.String({ minLength: 1, maxLength: 100 }),
            login: Type.String({
              minLength: 1,
              maxLength: 20,
              pattern: '^[0-9]+$',
              description: 'the MetaTrader account number',
            }),
            password: Type.String({
              minLength: 1,
              maxLength: 100,
              description: 'the trading (master) password, not the investor password',
            }),
            ...AssignFields,
          },
          { additionalProperties: false },
        ),
        response: { 200: TestedAccountSchema, 201: TestedAccountSchema, ...stdErrors(409, 422, 502, 503) },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const userId = userOf(req);
      const brokerIdentity = brokerIdentityOf({ platform: 'platforma', server: b.server, accountId: b.login });
      // Credentials first: MetaApi verifies a password only by connecting with it, and a refusal for another
      // user's login before that would answer a wrong password differently from a free login's (issue 46).
      const holder = await holderAfterProof(deps, userId, brokerIdentity);
      const before = holder?.userId === userId ? holder : null;
      const p = await provisionMtAccount({
        ...a(),
        server: b.server,
        login: b.login,
        password: b.password,
        platform: b.platform,
        failedCredentials: failed,
        waitMs: 120_000,
        pollMs: 500,
      });
      if (holder && !before) {
        // The caller proved the login, so it may learn that it is taken; nothing stays upstream for them.
        await removeMtAccount({ baseUrl: a().baseUrl, token: a().token, accountId: p.accountId }).catch(
          () => undefined,
        );
        throw alreadyConnected('by another user');
      }
      let connected: Awaited<ReturnType<typeof storeConnectedAccount>>;
      try {
        connected = await storeConnectedAccount(deps, {
          userId,
          platform: 'platforma',
          role: b.role ?? 'slave',
          groupId: b.groupId ?? null,
          name: b.name ?? `${p.platform.toUpperCase()} ${p.accountNumber} @ ${p.server}`,
          brokerAccountId: p.accountId,
          brokerAccountNumber: p.accountNumber,
          brokerName: p.broker,
          environment: null,
          currency: p.currency,
          brokerIdentity,
          credentials: {
            metaApiAccountId: p.accountId,
            platform: p.platform,
            server: p.server,
            login: p.accountNumber,
            hedging: p.hedging,
            region: p.region,
          },
        });
      } catch (err) {
        // Lost a race to another connect of the same login (the unique index), or the group check failed: nothing stays upstream.
        await removeMtAccount({ baseUrl: a().baseUrl, token: a().token, accountId: p.accountId }).catch(
          () => undefined,
        );
        throw err;
      }
      // A reconnect re-provisioned the login: the MetaApi account the connection used before is removed.
      if (connected.reconnected && before && before.brokerAccountId !== p.accountId) {
        await removeMtAccount({ baseUrl: a().baseUrl, token: a().token, accountId: before.brokerAccountId }).catch(
          () => undefined,
        );
      }
      const tested = await testAndPlace(deps, connected.account, connected.place);
      reply.code(connected.reconnected ? 200 : 201);
      return tested;
    },
  );
}
